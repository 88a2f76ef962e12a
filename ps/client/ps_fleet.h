// PsFleet: the model's variables as they lie across every ps task.
//
// Stitches axis-0 shards back into whole variables on pull and cuts whole
// gradients into shards on push, talking to the ps tasks in parallel through
// the PsConnections its owner made (ps/rpc/ps_connections.h in the task
// mains, in-process ones in unit tests): it names no transport. Both the
// workers and the chief use it, each computing the same Placement.
//
// Thread-compatible: one thread at a time calls a PsFleet.
#ifndef PSTRAIN_PS_CLIENT_PS_FLEET_H_
#define PSTRAIN_PS_CLIENT_PS_FLEET_H_

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "cluster/placement.h"
#include "core/mutex.h"
#include "core/status.h"
#include "core/stop_signals.h"
#include "core/tensor.h"
#include "core/thread_pool.h"
#include "proto/ps.pb.h"
#include "ps/client/ps_connection.h"
#include "ps/client/tensor_memory.h"
#include "ps/embedding/sparse_rows.h"

namespace pstrain {

class StreamedPull;
class StreamedPush;

class PsFleet {
 public:
  // The model's variables as they lie over the ps tasks.
  struct Layout {
    std::vector<cluster::VariableInfo> variables;  // model order
    cluster::Placement placement;                  // computed from them
    std::set<std::string> non_trainable;           // variable names
    // Embedding tables, spread over every ps by key (their shard fields
    // are set per ps here).
    std::vector<proto::EmbeddingTableConfig> tables;
  };

  // Computes the placement of `variables` (model order) over num_ps ps
  // tasks as `options` say. Spec is any type with `name`, `shape` and
  // `trainable` members, such as nn::VariableSpec. slots_per_variable is
  // the optimizer's slot count, given to each trainable variable; a
  // non-trainable one has no slots and its pushes are applied as
  // var -= delta. InvalidArgument when the variables cannot be placed so.
  template <typename Spec>
  static StatusOr<Layout> LayoutOf(int num_ps, const std::vector<Spec>& variables,
                                   int slots_per_variable,
                                   const cluster::PlacementOptions& options) {
    std::vector<cluster::VariableInfo> infos;
    std::set<std::string> non_trainable;
    for (const Spec& v : variables) {
      infos.push_back({v.name, v.shape, v.trainable ? slots_per_variable : 0});
      if (!v.trainable) non_trainable.insert(v.name);
    }
    return Place(num_ps, std::move(infos), std::move(non_trainable), options);
  }
  // LayoutOf a model's variables, with its embedding tables (each of its
  // `lookups()`' `table`), spread over every ps by key.
  template <typename Model>
  static StatusOr<Layout> LayoutOfModel(int num_ps, const Model& model, int slots_per_variable,
                                        const cluster::PlacementOptions& options) {
    PS_ASSIGN_OR_RETURN(Layout layout,
                        LayoutOf(num_ps, model.variables(), slots_per_variable, options));
    for (const auto& lookup : model.lookups()) layout.tables.push_back(lookup.table);
    return layout;
  }

  // Talks to the ps tasks through `connections`, one per ps task of the
  // placement, in task order. `memory` holds the tensors VariableBuffers
  // hands out and the pull buffers (null: ordinary memory).
  PsFleet(std::vector<std::unique_ptr<PsConnection>> connections, Layout layout,
          std::unique_ptr<TensorMemory> memory = nullptr);
  // Every variable trainable, ordinary memory.
  PsFleet(std::vector<std::unique_ptr<PsConnection>> connections,
          std::vector<cluster::VariableInfo> variables, cluster::Placement placement)
      : PsFleet(std::move(connections),
                Layout{std::move(variables), std::move(placement), {}, {}}) {}

  // Each ps's step when it answered (ps 0's is global_step).
  using PsSteps = std::vector<int64_t>;

  int num_ps() const { return static_cast<int>(clients_.size()); }
  const cluster::Placement& placement() const { return placement_; }
  PsConnection* client(int ps) { return clients_[ps].get(); }

  // Blocks until every ps answers (require_ready: and holds variables under
  // our placement), logging every few seconds which ps it waits for and why.
  // Aborted when `stop` is notified first, DeadlineExceeded after `timeout`.
  Status WaitForPs(bool require_ready, const StopNotice* stop, std::chrono::seconds timeout);

  // Sends every variable's initial value (model order) to the ps tasks that
  // own its shards; ps 0 holds global_step. `header` carries the optimizer
  // and training mode; the placement, variable names and non-trainable
  // shards are filled in here (as by RestoreState).
  Status InitVariables(const std::vector<Tensor>& values, const proto::InitHeader& header);

  // Whole tensors by name: variables ("conv1/weights") and their slots and
  // shadows ("conv1/weights/Momentum"), stitched from every ps's shards, so
  // the result does not depend on the placement.
  using State = std::map<std::string, Tensor>;
  // Pulls every ps's variables, slots and shadows (a checkpoint's content).
  Status PullState(State* state, PsSteps* steps);
  // Initializes the ps tasks in `which` (every ps when empty) from `state`,
  // which must hold every variable; slots and shadows it lacks start fresh.
  Status RestoreState(const State& state, const proto::InitHeader& header,
                      const std::vector<int>& which = {});
  // Tensors shaped as the variables, in model order, for a trainer's
  // variables and gradients: in the fleet's TensorMemory when it has one
  // (so that pulls land in them and pushes leave from them without a copy
  // on this side), else ordinary ones. Each call hands out other tensors.
  std::vector<Tensor> VariableBuffers();
  // Takes tensors a failed transfer used (TensorMemory::Retire); tensors of
  // ordinary memory are dropped.
  void Retire(std::vector<Tensor> tensors);

  // Pulls every variable, whole, in model order; steps (may be null) gets
  // each ps's step. Sync: min_step > 0 waits until every ps is at that step,
  // or DEADLINE_EXCEEDED after `wait`.
  Status PullVariables(std::vector<Tensor>* values, PsSteps* steps, int64_t min_step = 0,
                       std::chrono::milliseconds wait = std::chrono::milliseconds(0));

  struct PushResult {
    uint64_t sequence = 0;                     // the push's number (PushHeader.sequence)
    PsSteps steps;                             // each ps's step after the push
    std::vector<proto::PushOutcome> outcomes;  // per ps
    // Every ps wrote each variable it holds, as it is after the push,
    // into the push's pull_into: no pull is needed for them.
    bool values_pulled = false;
    int64_t global_step() const { return steps[0]; }
    bool any(proto::PushOutcome o) const;
  };
  // Pushes one gradient per variable (model order); `pulled` holds each
  // ps's step when the variables were pulled. Async: ps 0 counts the push
  // as a step, and the others learn global_step (pulled[0]) for their
  // learning-rate schedule. Sync: each ps checks its own step.
  StatusOr<PushResult> PushGradients(const std::vector<Tensor>& grads, int worker,
                                     int64_t local_step, const PsSteps& pulled, bool sync);
  // Every push carries this fleet's incarnation (drawn at random when it
  // is made) and a sequence number (ps/push_ledger.h). A push given
  // `sequence` 0 takes the next number; one given the number of a push
  // that failed is that push sent again: each ps that applied it answers
  // as it did the first time, without applying it twice, and the others
  // apply it. NextPushSequence is the number the next new push takes.
  uint64_t NextPushSequence() const { return last_sequence_ + 1; }
  // One step's pull and push, streamed so the caller computes while they
  // run (ps/client/ps_fleet_streams.h): the same requests' effect as PullVariables
  // and PushGradients, variable by variable. The fleet must outlive them;
  // no other pull of this fleet may run beside a StreamedPull.
  std::unique_ptr<StreamedPull> StartPull(
      std::vector<Tensor>* values, int64_t min_step = 0,
      std::chrono::milliseconds wait = std::chrono::milliseconds(0));
  std::unique_ptr<StreamedPush> StartPush(int worker, int64_t local_step, const PsSteps& pulled,
                                          bool sync, uint64_t sequence = 0);
  // Embedding tables in blocks, for checkpoints and restores.
  const std::vector<proto::EmbeddingTableConfig>& tables() const { return tables_; }
  // Every ps's rows of `table` in turn (PsConnection::ExportRows), each
  // reply handed to on_reply.
  Status ExportTable(const std::string& table, bool delta, bool start_deltas,
                     const std::function<Status(const proto::ExportRowsResponse&)>& on_reply);
  // Rows saved from any number of ps tasks, written back over this fleet's
  // ps tasks in `which` (every ps when empty): the source is read through
  // once and each block's keys are sent to the ps that holds them
  // (KeyShard), at most EmbeddingTable::kMaxKeysPerRowBlock a block, over
  // one ImportRows stream per ps, all at once. No table is ever whole in
  // memory: at most a few blocks wait for each ps.
  class RowSource {
   public:
    virtual ~RowSource() = default;
    // The next block; false at the end.
    virtual StatusOr<bool> Next(proto::RowBlock* block) = 0;
  };
  Status ImportTable(RowSource* source, const std::vector<int>& which = {});
  // Ends a restore begun with InitHeader.rows_follow on every ps, once
  // their rows are imported: until then they refuse pulls and pushes.
  Status FinishRestore();

  // A step's rows of one embedding table: the batch's ids made unique and
  // sent, each to the ps that holds it (cluster/key_partition.h), in the
  // same request as that ps's variables; a pull gives `rows`, one per
  // unique id; a push sends a gradient row per unique id (what a layer's
  // backward gives: repeats already summed).
  struct TableStep {
    std::string table;
    int dim = 0;
    UniqueKeys ids;   // Unique of the batch's ids
    KeyIndex unique;  // Unique's index, kept from step to step
    Tensor rows;      // [ids.keys.size(), dim], after a pull
    // Set by Shard: per ps, the places among ids.keys of the keys it holds.
    std::vector<std::vector<int32_t>> places;
  };
  // Splits each table's unique ids by ps. InvalidArgument, naming the
  // table, the ps and the count, when a ps's share of the tables' keys is
  // more than one request carries (EmbeddingTable::kMaxKeysPerRequest): a
  // batch too large for its ids.
  Status Shard(std::vector<TableStep>* tables) const;
  // PullVariables, with each table's rows in the same requests (tables
  // Shard split).
  Status PullVariablesAndRows(std::vector<Tensor>* values, std::vector<TableStep>* tables,
                              PsSteps* steps, int64_t min_step = 0,
                              std::chrono::milliseconds wait = std::chrono::milliseconds(0));
  // PushGradients, with each table's gradient rows (row_grads[t]: [its
  // unique ids, dim]) in the same pushes. pull_into (may be null): whole
  // variables in model order, shaped as PullVariables shapes them, where
  // each ps writes its variables' values once the push is applied, where
  // it can (PsConnection::PushAndPull); values_pulled says whether all
  // were written. The tables' rows are not.
  StatusOr<PushResult> PushGradientsAndRows(const std::vector<Tensor>& grads,
                                            const std::vector<TableStep>& tables,
                                            const std::vector<Tensor>& row_grads, int worker,
                                            int64_t local_step, const PsSteps& pulled, bool sync,
                                            uint64_t sequence = 0,
                                            std::vector<Tensor>* pull_into = nullptr);

  // The status of ps 0, which keeps global_step and the finished workers.
  StatusOr<proto::StatusResponse> CoordinatorStatus();
  // Sync replicas: tells every ps which workers can still push.
  Status SetLiveWorkers(const std::vector<int>& workers);
  Status ShutdownAll(const std::string& reason);

 private:
  friend class StreamedPull;
  friend class StreamedPush;
  // Gives values[v] its variable's shape (reallocating only when it has
  // another), for a pull to fill.
  void ShapeVariable(size_t v, std::vector<Tensor>* values) const;
  // Moves or copies one pulled shard from `buffers` (its ps's) into its
  // variable's `whole`; DataLoss when the ps did not return it, or returned
  // another shape.
  Status PlaceShard(const cluster::Shard& shard, std::map<std::string, Tensor>* buffers,
                    Tensor* whole) const;
  // A push's arguments checked whole, before any part leaves: one gradient
  // per variable, of its shape; per table one gradient row per unique id,
  // of the table's dim, its ids split by Shard. InvalidArgument naming the
  // first that is not so, and then no ps receives any of the push.
  Status CheckPush(const std::vector<Tensor>& grads, const std::vector<TableStep>& tables,
                   const std::vector<Tensor>& row_grads) const;
  // The header of ps `ps`'s part of a push (PushGradients' arguments),
  // num_tensors included.
  proto::PushHeader PushHeaderFor(int ps, int worker, int64_t local_step, const PsSteps& pulled,
                                  bool sync, uint64_t sequence) const;
  // Ps `ps`'s rows of a table's gradient rows `all`, gathered from their
  // places.
  static Tensor RowsOnPs(const TableStep& table, const Tensor& all, int ps);
  // Views of the shards of `values` (whole variables in model order; null:
  // none) that ps `ps` holds, by shard name: where a push that pulls has
  // it write them. `index`: each variable's place in model order.
  std::map<std::string, Tensor> ValuesOnPs(int ps, const std::map<std::string, size_t>& index,
                                           std::vector<Tensor>* values) const;
  // `sequence`, or the next number when it is 0.
  uint64_t SequenceFor(uint64_t sequence);
  // Runs fn(ps) for every ps in parallel (ps 0 on the caller's thread, the
  // rest on fan_out_); returns the first error.
  Status ForEachPs(const std::function<Status(int ps)>& fn);

  static StatusOr<Layout> Place(int num_ps, std::vector<cluster::VariableInfo> variables,
                                std::set<std::string> non_trainable,
                                const cluster::PlacementOptions& options);

  std::vector<cluster::VariableInfo> variables_;
  std::set<std::string> non_trainable_;  // variable names
  std::vector<proto::EmbeddingTableConfig> tables_;
  const uint64_t incarnation_;
  uint64_t last_sequence_ = 0;
  cluster::Placement placement_;
  std::vector<std::unique_ptr<PsConnection>> clients_;
  std::vector<std::vector<const cluster::Shard*>> shards_by_ps_;
  // Per ps, the buffers PullVariables assembles the next pull into: those
  // of the pull before last, handed back by the caller's values.
  Mutex pull_buffers_mu_;
  std::vector<std::map<std::string, Tensor>> pull_buffers_ ABSL_GUARDED_BY(pull_buffers_mu_);
  const std::unique_ptr<TensorMemory> memory_;  // null: ordinary memory
  // Whether the first VariableBuffers call put the pull buffers of the ps
  // tasks memory_ serves in it.
  std::once_flag pull_buffers_placed_;
  // The pull buffers after a pull: back for the next one, or (it failed)
  // their tensors retired.
  void ReturnPullBuffers(std::vector<std::map<std::string, Tensor>>* buffers, bool failed);
  // ForEachPs's threads, one per ps past the first, kept between steps: a
  // step with a hundred ps tasks starts no thread. Declared last: its
  // threads end before what they use.
  ThreadPool fan_out_;
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_CLIENT_PS_FLEET_H_
