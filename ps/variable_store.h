// VariableStore: what one ps task holds, and the order in which a push
// changes it. Its parts each do one job under a lock of their own:
//   DenseVariables   the dense variables with their optimizer slots, a lock
//                    per variable (ps/dense_variables.h);
//   MovingAverages   their ExponentialMovingAverage shadows, a lock per
//                    shadow (ps/moving_averages.h);
//   EmbeddingTables  this ps's shards of the embedding tables, one update
//                    lock for all, each table's own for its rows
//                    (ps/embedding/embedding_tables.h);
//   SyncReplicas     the synchronous step's accumulator (ps/sync_replicas.h);
//   MemoryBudget     the bytes (--max_memory_bytes) the variables and the
//                    tables share, lock-free (ps/memory_budget.h);
//   StepWaiters      pulls waiting for a step (ps/step_waiters.h);
// and global_step, on one ps, an atomic.
//
// A push applies its variables and its rows all or none: the rows it would
// make are reserved in the budget before anything changes. Under sync
// replicas the rows are averaged as TF's SparseConditionalAccumulator does;
// a completed step whose new rows do not fit the budget is applied without
// that table's rows, which are counted (rows_refused) and logged.
//
// Thread-safe. Initialize replaces every part and excludes all else (the
// store's own lock, taken shared by every other call). The locks nest in
// one order: the store's, SyncReplicas', the tables' update lock, a table's;
// a variable's, then its shadow's.
#ifndef PSTRAIN_PS_VARIABLE_STORE_H_
#define PSTRAIN_PS_VARIABLE_STORE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/mutex.h"
#include "core/status.h"
#include "core/tensor.h"
#include "proto/ps.pb.h"
#include "ps/dense_variables.h"
#include "ps/embedding/embedding_table.h"
#include "ps/embedding/embedding_tables.h"
#include "ps/embedding/sparse_rows.h"
#include "ps/memory_budget.h"
#include "ps/moving_averages.h"
#include "ps/optimizer.h"
#include "ps/step_waiters.h"
#include "ps/sync_replicas.h"

namespace pstrain {

class VariableStore {
 public:
  // max_bytes bounds what Initialize may hold: variables, slots and shadows.
  // A wait for a step (WaitForStep) measures its timeout on `clock`.
  explicit VariableStore(uint64_t max_bytes = UINT64_MAX, Clock* clock = Clock::Real())
      : max_bytes_(max_bytes), clock_(clock), budget_(max_bytes) {}

  struct InitOptions {
    uint64_t placement_fingerprint = 0;
    bool holds_global_step = false;
    int64_t global_step = 0;
    proto::SyncConfig sync;  // enabled: synchronous replicas
    // > 0: keep an ExponentialMovingAverage shadow of every trainable
    // variable, updated after each application with decay
    // min(ema_decay, (1+n)/(10+n)), n = global_step.
    float ema_decay = 0;
    // Names of the non-trainable variables among Initialize's `values`.
    std::set<std::string> non_trainable;
    // This ps's shards of the embedding tables, which start empty, and the
    // optimizer they train with unless one names its own.
    std::vector<proto::EmbeddingTableConfig> tables;
    proto::OptimizerConfig optimizer_config;
    std::string ps_name = "ps";  // in errors: "ps:1"
  };

  // Name suffix of a variable's moving-average shadow ("conv1/weights/" +).
  static constexpr const char* kEmaSuffix = MovingAverages::kSuffix;

  // Replaces every variable with `values` (each slot element at the
  // optimizer's slot_initial_value) and marks the store ready. Each variable's
  // update count, Adam's t, starts at options.global_step: after a restore
  // from a checkpoint at step S every variable is taken to have had S updates.
  // InvalidArgument for an empty name, or a non_trainable name that is not
  // among `values`.
  // `state` may hold saved slots and shadows, named "<variable>/<slot>" and
  // "<variable>/ExponentialMovingAverage" (a restore); others start fresh.
  // InvalidArgument for a state tensor that matches no variable, slot or
  // shadow, or has another shape. ResourceExhausted, before any slot is
  // allocated, when the variables with their slots and shadows would take
  // more than max_bytes. On an error the store is as it was.
  Status Initialize(const InitOptions& options, std::unique_ptr<Optimizer> optimizer,
                    std::map<std::string, Tensor> values, std::map<std::string, Tensor> state = {});

  bool ready() const;
  uint64_t max_bytes() const { return max_bytes_; }
  // OK when a gradient `name` of `shape` may be pushed: a variable of that
  // shape. NotFound or InvalidArgument otherwise, naming the variable. Lets
  // a push be refused before its tensors are allocated.
  Status CheckGradient(const std::string& name, const Shape& shape) const;
  // FailedPrecondition when not initialized or initialized under another
  // placement; the message gives both fingerprints.
  Status CheckPlacement(uint64_t fingerprint) const;

  // Copies of the named variables (every variable when names is empty), in
  // the order asked. NotFound naming the first unknown variable.
  StatusOr<std::vector<std::pair<std::string, Tensor>>> Read(
      const std::vector<std::string>& names) const;
  // As Read, without copying: each variable's current value, which no update
  // changes while the caller holds it (an update then writes a new copy), so
  // a pull sends it as it is.
  using SharedTensor = DenseVariables::SharedTensor;
  StatusOr<std::vector<std::pair<std::string, SharedTensor>>> ReadShared(
      const std::vector<std::string>& names) const;

  // Embedding tables. NotFound for a table this ps does not hold;
  // InvalidArgument for a key outside its vocabulary or this ps's shard.
  Status CheckKeys(const std::string& table, const std::vector<int64_t>& keys) const;
  // A table's row length; NotFound for an unknown table.
  StatusOr<int> TableDim(const std::string& table) const;
  // The rows of `keys` (which CheckKeys accepted), [keys.size(), dim]:
  // each key's row, or its initial value when it has none.
  StatusOr<Tensor> ReadRows(const std::string& table, const std::vector<int64_t>& keys) const;
  using TableStats = EmbeddingTables::TableStats;
  std::vector<TableStats> table_stats() const;
  // A table's rows in blocks (EmbeddingTable::ReadRows): NotFound for an
  // unknown table.
  StatusOr<int64_t> ReadTableRows(const std::string& table, int64_t first, int64_t count,
                                  bool changed_only, EmbeddingTable::RowBlock* out) const;
  StatusOr<int64_t> TableRowEnd(const std::string& table) const;
  // EmbeddingTable::DroppedKeys and StartDeltas of a table.
  StatusOr<std::vector<int64_t>> TableDroppedKeys(const std::string& table) const;
  Status StartTableDeltas(const std::string& table);
  // The table's slot names and floats a row takes with them.
  StatusOr<std::vector<std::string>> TableSlots(const std::string& table) const;
  // Writes rows (keys checked as CheckKeys does) or erases keys, as a
  // restore does; serialized with the tables' updates.
  Status WriteTableRows(const std::string& table, const EmbeddingTable::RowBlock& rows);
  StatusOr<int64_t> EraseTableRows(const std::string& table, const std::vector<int64_t>& keys);
  // Sync steps since Initialize whose new rows of a table did not fit the
  // budget.
  int64_t rows_refused() const;

  // Checks every gradient first (known variable, same shape; known table,
  // [keys, dim] rows; the keys CheckKeys accepted) and applies none when
  // one is wrong, nor when the rows it would make do not fit the budget
  // (ResourceExhausted naming the table and the ps); then applies each
  // under its variable's lock, at the learning rate of the optimizer's
  // schedule at the current global_step, and the rows (unique keys) of
  // each table. Returns global_step afterwards (incremented once when asked
  // and held here).
  // Async: a ps that does not hold global_step learns it from the pushes
  // (global_step_hint, the step the worker last saw), for the schedule.
  // `copies`: for variables among grads, where each one's value is also
  // written once updated (DenseVariables::Apply).
  StatusOr<int64_t> ApplyGradients(const std::map<std::string, Tensor>& grads,
                                   bool increment_global_step, int64_t global_step_hint = 0,
                                   const std::map<std::string, SparseRows>& sparse = {},
                                   const DenseVariables::ValueCopies& copies = {});

  // Sync replicas: offers one worker's gradients computed at step
  // `computed_at` to this ps's accumulator (ps/sync_accumulator.h). When they
  // complete the step, the average is applied to every variable, the step
  // advances and WaitForStep's waiters wake. Returns the outcome and this
  // ps's step afterwards.
  using SyncPushResult = SyncReplicas::Result;
  // ResourceExhausted, nothing offered, when this worker's rows alone do
  // not fit the budget.
  StatusOr<SyncPushResult> OfferSyncGradients(int worker, int64_t computed_at,
                                              std::map<std::string, Tensor> grads,
                                              std::map<std::string, SparseRows> sparse = {});
  // Sync replicas: a wait for this ps's step to reach min_step that holds
  // no thread (ps/step_waiters.h). 0 when it has already (`ready` is not
  // called); else the wait's id, and `ready` is called once: OkStatus when
  // the step comes, DeadlineExceeded (saying how many gradients the step
  // still lacks) once `timeout` has passed on the store's clock, Aborted
  // when the ps is re-initialized meanwhile (a restore moved its step),
  // Cancelled by CancelStepWait. `ready` must be quick: it may run under
  // the store's locks.
  uint64_t WhenStep(int64_t min_step, Clock::Duration timeout, StepWaiters::Ready ready);
  // Ends wait `id` with Cancelled unless it has ended; once this returns,
  // its `ready` has returned or will never be called.
  void CancelStepWait(uint64_t id) { waiters_.Cancel(id); }
  // WhenStep on the caller's thread: blocks until it ends, and ends it as
  // Cancelled as soon as cancelled() says so (asked every kCancelPoll).
  Status WaitForStep(int64_t min_step, Clock::Duration timeout,
                     const std::function<bool()>& cancelled);
  static constexpr std::chrono::milliseconds kCancelPoll{100};
  // Sync replicas: how many workers can still push (the chief's view:
  // neither finished nor declared dead). A step then needs min(R, live)
  // gradients; when the pending step already has that many it is applied
  // now, as OfferSyncGradients would. Returns this ps's step afterwards.
  // FailedPrecondition when this ps trains asynchronously.
  StatusOr<int64_t> SetLiveReplicas(int live);
  bool sync_enabled() const { return sync_.enabled(); }
  using SyncStats = SyncReplicas::Stats;
  SyncStats sync_stats() const { return sync_.stats(); }

  // Copies of every variable with its slots and shadow, named as Initialize's
  // `state` names them: what a checkpoint saves.
  StatusOr<std::vector<std::pair<std::string, Tensor>>> ReadState() const;

  bool holds_global_step() const;
  int64_t global_step() const { return global_step_.load(); }
  // The optimizer's learning rate at the current global_step; 0 before
  // Initialize.
  float learning_rate() const;
  uint64_t placement_fingerprint() const;
  int64_t num_variables() const;
  int64_t num_bytes() const;

 private:
  // Unavailable before Initialize.
  Status CheckReadyLocked() const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // The table of that name: CheckReadyLocked's and EmbeddingTables::Find's
  // errors.
  StatusOr<EmbeddingTable*> TableLocked(const std::string& table) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // learning_rate() for a caller holding mu_.
  float LearningRateLocked() const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // SyncReplicas' ApplyStep: the average to the variables and the tables,
  // then the step advances and its waiters wake.
  void ApplySyncStepLocked(SyncAccumulator::Average average, int64_t computed_at)
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  SyncReplicas::ApplyStep ApplySyncStep() ABSL_SHARED_LOCKS_REQUIRED(mu_);

  const uint64_t max_bytes_;
  Clock* const clock_;
  mutable SharedMutex mu_;  // exclusive for Initialize, shared otherwise
  bool ready_ ABSL_GUARDED_BY(mu_) = false;
  InitOptions options_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<DenseVariables> variables_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<EmbeddingTables> tables_ ABSL_GUARDED_BY(mu_);
  std::atomic<int64_t> global_step_{0};

  // What the variables and the tables hold, against max_bytes.
  MemoryBudget budget_;
  uint64_t variables_reserved_ ABSL_GUARDED_BY(mu_) = 0;

  SyncReplicas sync_;
  // Pulls waiting for a step; declared last: its timer goes first.
  StepWaiters waiters_{clock_, [this] { return sync_.DescribeStep(); }};
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_VARIABLE_STORE_H_
