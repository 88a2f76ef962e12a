// VariableStore: the variables one ps task holds, with their optimizer slots
// and (on one ps) global_step.
//
// A non-trainable variable (batch norm's moving statistics) has no slots and
// no moving-average shadow; what is pushed for it is an assign_sub delta,
// applied as var -= delta without the optimizer (sync: the average delta).
//
// Beside the variables, the store holds this ps's shard of each embedding
// table (ps/embedding/embedding_table.h): rows looked up by key (ReadRows)
// and updated where a push's sparse gradients touch them. A push applies
// its variables and its rows all or none: the rows it would make are
// reserved in the ps's MemoryBudget (--max_memory_bytes, shared with the
// variables) before anything changes. Under sync replicas the rows are
// averaged as TF's SparseConditionalAccumulator does (ps/sync_accumulator.h);
// a completed step whose new rows do not fit the budget is applied without
// that table's rows, which are counted (rows_refused) and logged. Expiry
// (a table's ttl_steps) runs as the step advances, every ttl_steps / 8
// steps at least, so a row outlives its last gradient by at most
// ttl_steps + ttl_steps / 8 steps. Every push (every sync step) updates
// every table, as a TF optimizer's apply_gradients does every variable: a
// table without rows in it counts the update (Adam's t), and TF's sparse
// Adam decays its rows.
//
// Thread-safe. Pulls and pushes run concurrently on gRPC threads; each
// variable has its own lock, so pushes to different variables proceed in
// parallel and concurrent pushes to one variable are serialized (no update
// is ever lost). Updates of embedding tables are serialized per ps; lookups
// run beside them. Initialize replaces everything and excludes all else.
#ifndef PSTRAIN_PS_VARIABLE_STORE_H_
#define PSTRAIN_PS_VARIABLE_STORE_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/mutex.h"
#include "core/status.h"
#include "core/tensor.h"
#include "proto/ps.pb.h"
#include "ps/embedding/embedding_table.h"
#include "ps/embedding/sparse_rows.h"
#include "ps/memory_budget.h"
#include "ps/optimizer.h"
#include "ps/step_waiters.h"
#include "ps/sync_accumulator.h"

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
  static constexpr const char* kEmaSuffix = "ExponentialMovingAverage";

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
  using SharedTensor = std::shared_ptr<const Tensor>;
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
  struct TableStats {
    std::string name;
    int dim = 0;
    EmbeddingTable::Stats stats;
  };
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
  // Sync steps whose new rows of a table did not fit the budget.
  int64_t rows_refused() const { return rows_refused_.load(); }

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
  StatusOr<int64_t> ApplyGradients(const std::map<std::string, Tensor>& grads,
                                   bool increment_global_step, int64_t global_step_hint = 0,
                                   const std::map<std::string, SparseRows>& sparse = {});

  // Sync replicas: offers one worker's gradients computed at step
  // `computed_at` to this ps's accumulator (ps/sync_accumulator.h). When they
  // complete the step, the average is applied to every variable, the step
  // advances and WaitForStep's waiters wake. Returns the outcome and this
  // ps's step afterwards.
  struct SyncPushResult {
    proto::PushOutcome outcome;
    int64_t step;
  };
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
  bool sync_enabled() const;
  struct SyncStats {
    int pending = 0;
    int required = 0;  // gradients the step needs: min(R, live workers)
    int64_t stale_dropped = 0;
    int64_t duplicates_dropped = 0;
  };
  SyncStats sync_stats() const;

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
  struct Variable {
    Mutex mu;
    // Set before the variable is shared, never changed.
    bool trainable = true;  // false: pushes are deltas, var -= delta
    Shape shape;
    // Copy on write: readers (ReadShared) hold it; an update changes it in
    // place only when no reader does (Writable).
    std::shared_ptr<Tensor> value ABSL_GUARDED_BY(mu);
    std::vector<Tensor> slots ABSL_GUARDED_BY(mu);
    Tensor ema ABSL_GUARDED_BY(mu);                // the shadow, when options_.ema_decay > 0
    int64_t update_count ABSL_GUARDED_BY(mu) = 0;  // gradients applied, Optimizer::Apply's count
  };

  // Initialize's parts: the bytes the variables need with their slots and
  // shadows (checked against this ps's limit), and the variables made,
  // each slot and shadow from `state` where it holds one (every tensor
  // of `state` must be one).
  StatusOr<uint64_t> Footprint(const InitOptions& options, size_t num_slots,
                               const std::map<std::string, Tensor>& values) const;
  static StatusOr<std::map<std::string, std::unique_ptr<Variable>>> MakeVariables(
      const InitOptions& options, const Optimizer& optimizer, std::map<std::string, Tensor> values,
      std::map<std::string, Tensor> state);
  // The variable's value, to update: a copy when a reader still holds it.
  static Tensor& Writable(Variable* v) ABSL_EXCLUSIVE_LOCKS_REQUIRED(v->mu);
  // learning_rate() for a caller holding mu_.
  float LearningRateLocked() const ABSL_SHARED_LOCKS_REQUIRED(mu_);

  // Applies `grads` (already checked) to their variables at the current rate;
  // subtracts them from the non-trainable ones.
  void ApplyLocked(const std::vector<std::pair<Variable*, const Tensor*>>& work)
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // The table of that name; NotFound naming it.
  StatusOr<EmbeddingTable*> TableLocked(const std::string& table) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Checks sparse gradients as ApplyGradients does.
  Status CheckSparseLocked(const std::map<std::string, SparseRows>& sparse) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Plans each table's update and reserves the bytes it needs, all or
  // none: the plans, or ResourceExhausted naming the table that does not
  // fit.
  StatusOr<std::map<std::string, EmbeddingTable::Plan>> ReserveRowsLocked(
      const std::map<std::string, SparseRows>& sparse) ABSL_SHARED_LOCKS_REQUIRED(mu_)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(sparse_mu_);
  // Applies planned rows at `step`, then lets expiry run.
  void ApplyRowsLocked(const std::map<std::string, SparseRows>& sparse,
                       const std::map<std::string, EmbeddingTable::Plan>& plans, int64_t step)
      ABSL_SHARED_LOCKS_REQUIRED(mu_) ABSL_EXCLUSIVE_LOCKS_REQUIRED(sparse_mu_);
  // Applies the accumulator's average, advances the step and wakes the
  // waiters.
  void CompleteStepLocked() ABSL_SHARED_LOCKS_REQUIRED(mu_) ABSL_EXCLUSIVE_LOCKS_REQUIRED(sync_mu_);
  // The variables `grads` name, or an error for an unknown name or shape.
  StatusOr<std::vector<std::pair<Variable*, const Tensor*>>> ResolveLocked(
      const std::map<std::string, Tensor>& grads) ABSL_SHARED_LOCKS_REQUIRED(mu_);

  const uint64_t max_bytes_;
  Clock* const clock_;
  mutable SharedMutex mu_;  // exclusive for Initialize, shared otherwise
  bool ready_ ABSL_GUARDED_BY(mu_) = false;
  InitOptions options_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<Optimizer> optimizer_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::unique_ptr<Variable>> variables_ ABSL_GUARDED_BY(mu_);
  std::atomic<int64_t> global_step_{0};

  // What the variables and the tables hold, against max_bytes.
  MemoryBudget budget_;
  uint64_t variables_reserved_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, std::unique_ptr<EmbeddingTable>> tables_ ABSL_GUARDED_BY(mu_);
  // Serializes the tables' updates and expiry.
  mutable Mutex sparse_mu_ ABSL_ACQUIRED_AFTER(mu_);
  std::map<std::string, int64_t> last_expiry_ ABSL_GUARDED_BY(sparse_mu_);  // table -> step
  std::atomic<int64_t> rows_refused_{0};

  // Sync replicas: the accumulator, and waiters for the step to advance.
  mutable Mutex sync_mu_ ABSL_ACQUIRED_AFTER(mu_) ABSL_ACQUIRED_BEFORE(sparse_mu_);
  std::unique_ptr<SyncAccumulator> accumulator_ ABSL_GUARDED_BY(sync_mu_);
  // What a timed-out wait's step still lacks, for its error.
  std::string DescribeStepLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(sync_mu_);
  // Pulls waiting for a step; declared last: its timer goes first.
  StepWaiters waiters_{clock_, [this] {
                         MutexLock slock(&sync_mu_);
                         return DescribeStepLocked();
                       }};
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_VARIABLE_STORE_H_
