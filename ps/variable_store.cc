#include "ps/variable_store.h"

#include <glog/logging.h>

#include <cinttypes>
#include <condition_variable>
#include <cstdio>
#include <mutex>

namespace pstrain {
namespace {

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%016" PRIx64, v);
  return buf;
}

}  // namespace

Status VariableStore::Initialize(const InitOptions& options, std::unique_ptr<Optimizer> optimizer,
                                 std::map<std::string, Tensor> values,
                                 std::map<std::string, Tensor> state) {
  // Everything the store will hold, counted before any slot is allocated.
  const DenseVariables::Options dense{options.non_trainable, options.global_step,
                                      options.ema_decay};
  PS_ASSIGN_OR_RETURN(const uint64_t footprint,
                      DenseVariables::Footprint(dense, optimizer->slot_names().size(), values));
  if (footprint > max_bytes_) {
    return ResourceExhausted(std::to_string(values.size()) + " variables with their slots and " +
                             "shadows need " + std::to_string(footprint) +
                             " bytes, more than this ps may hold (" + std::to_string(max_bytes_) +
                             ")");
  }
  if (options.sync.enabled() && options.sync.replicas_to_aggregate() < 1) {
    return InvalidArgument("replicas_to_aggregate must be >= 1");
  }
  PS_ASSIGN_OR_RETURN(auto variables, DenseVariables::Make(dense, std::move(optimizer),
                                                           std::move(values), std::move(state)));
  PS_ASSIGN_OR_RETURN(auto tables, EmbeddingTables::Make(
                                       options.tables, options.optimizer_config, options.ps_name,
                                       &budget_, options.global_step, [&](const std::string& name) {
                                         return variables->has(name);
                                       }));
  WriterLock lock(&mu_);
  // What the store held goes first: its tables give their bytes back as
  // they go.
  tables_.reset();
  budget_.Release(variables_reserved_);
  variables_reserved_ = 0;
  if (!budget_.TryReserve(footprint)) {
    return ResourceExhausted("the variables need " + std::to_string(footprint) + " bytes, but " +
                             std::to_string(budget_.used()) + " of this ps's " +
                             std::to_string(max_bytes_) + " are held");
  }
  variables_reserved_ = footprint;
  const Status reset = sync_.Reset(options.sync, options.global_step);
  CHECK(reset.ok()) << reset.ToString();  // its one refusal is checked above
  variables_ = std::move(variables);
  tables_ = std::move(tables);
  options_ = options;
  global_step_.store(options.global_step);
  waiters_.Restart(options.global_step);
  ready_ = true;
  return OkStatus();
}

Status VariableStore::CheckReadyLocked() const {
  if (!ready_) return Unavailable("variables are not initialized (is this ps restarting?)");
  return OkStatus();
}

StatusOr<EmbeddingTable*> VariableStore::TableLocked(const std::string& table) const {
  PS_RETURN_IF_ERROR(CheckReadyLocked());
  return tables_->Find(table);
}

bool VariableStore::ready() const {
  ReaderLock lock(&mu_);
  return ready_;
}

Status VariableStore::CheckPlacement(uint64_t fingerprint) const {
  ReaderLock lock(&mu_);
  PS_RETURN_IF_ERROR(CheckReadyLocked());
  if (fingerprint != options_.placement_fingerprint) {
    return FailedPrecondition("placement mismatch: request made under placement " +
                              Hex(fingerprint) + ", this ps holds placement " +
                              Hex(options_.placement_fingerprint) +
                              " (do all tasks use the same cluster spec, model and "
                              "--placement/--min_slice_bytes?)");
  }
  return OkStatus();
}

Status VariableStore::CheckGradient(const std::string& name, const Shape& shape) const {
  ReaderLock lock(&mu_);
  PS_RETURN_IF_ERROR(CheckReadyLocked());
  return variables_->CheckGradient(name, shape);
}

StatusOr<std::vector<std::pair<std::string, Tensor>>> VariableStore::Read(
    const std::vector<std::string>& names) const {
  PS_ASSIGN_OR_RETURN(auto shared, ReadShared(names));
  std::vector<std::pair<std::string, Tensor>> out;
  for (const auto& [name, value] : shared) out.emplace_back(name, *value);
  return out;
}

StatusOr<std::vector<std::pair<std::string, VariableStore::SharedTensor>>>
VariableStore::ReadShared(const std::vector<std::string>& names) const {
  ReaderLock lock(&mu_);
  if (ready_) return variables_->ReadShared(names);
  if (!names.empty()) return NotFound("no variable " + names[0] + " on this ps");
  return std::vector<std::pair<std::string, SharedTensor>>{};
}

Status VariableStore::CheckKeys(const std::string& table, const std::vector<int64_t>& keys) const {
  ReaderLock lock(&mu_);
  PS_ASSIGN_OR_RETURN(EmbeddingTable * t, TableLocked(table));
  return t->CheckKeys(keys);
}

StatusOr<int> VariableStore::TableDim(const std::string& table) const {
  ReaderLock lock(&mu_);
  PS_ASSIGN_OR_RETURN(EmbeddingTable * t, TableLocked(table));
  return t->dim();
}

StatusOr<Tensor> VariableStore::ReadRows(const std::string& table,
                                         const std::vector<int64_t>& keys) const {
  ReaderLock lock(&mu_);
  PS_ASSIGN_OR_RETURN(EmbeddingTable * t, TableLocked(table));
  Tensor rows({static_cast<int64_t>(keys.size()), t->dim()}, Tensor::kUninitialized);
  t->Lookup(keys, rows.data());
  return rows;
}

StatusOr<int64_t> VariableStore::ReadTableRows(const std::string& table, int64_t first,
                                               int64_t count, bool changed_only,
                                               EmbeddingTable::RowBlock* out) const {
  ReaderLock lock(&mu_);
  PS_ASSIGN_OR_RETURN(EmbeddingTable * t, TableLocked(table));
  return t->ReadRows(first, count, changed_only, out);
}

StatusOr<int64_t> VariableStore::TableRowEnd(const std::string& table) const {
  ReaderLock lock(&mu_);
  PS_ASSIGN_OR_RETURN(EmbeddingTable * t, TableLocked(table));
  return t->row_end();
}

StatusOr<std::vector<int64_t>> VariableStore::TableDroppedKeys(const std::string& table) const {
  ReaderLock lock(&mu_);
  PS_ASSIGN_OR_RETURN(EmbeddingTable * t, TableLocked(table));
  return t->DroppedKeys();
}

Status VariableStore::StartTableDeltas(const std::string& table) {
  ReaderLock lock(&mu_);
  PS_RETURN_IF_ERROR(CheckReadyLocked());
  return tables_->StartDeltas(table);
}

StatusOr<std::vector<std::string>> VariableStore::TableSlots(const std::string& table) const {
  ReaderLock lock(&mu_);
  PS_ASSIGN_OR_RETURN(EmbeddingTable * t, TableLocked(table));
  return t->slot_names();
}

Status VariableStore::WriteTableRows(const std::string& table,
                                     const EmbeddingTable::RowBlock& rows) {
  ReaderLock lock(&mu_);
  PS_RETURN_IF_ERROR(CheckReadyLocked());
  return tables_->WriteRows(table, rows, global_step_.load());
}

StatusOr<int64_t> VariableStore::EraseTableRows(const std::string& table,
                                                const std::vector<int64_t>& keys) {
  ReaderLock lock(&mu_);
  PS_RETURN_IF_ERROR(CheckReadyLocked());
  return tables_->EraseRows(table, keys);
}

std::vector<VariableStore::TableStats> VariableStore::table_stats() const {
  ReaderLock lock(&mu_);
  if (!ready_) return {};
  return tables_->stats();
}

int64_t VariableStore::rows_refused() const {
  ReaderLock lock(&mu_);
  return ready_ ? tables_->rows_refused() : 0;
}

StatusOr<std::vector<std::pair<std::string, Tensor>>> VariableStore::ReadState() const {
  ReaderLock lock(&mu_);
  PS_RETURN_IF_ERROR(CheckReadyLocked());
  return variables_->ReadState();
}

StatusOr<int64_t> VariableStore::ApplyGradients(const std::map<std::string, Tensor>& grads,
                                                bool increment_global_step,
                                                int64_t global_step_hint,
                                                const std::map<std::string, SparseRows>& sparse,
                                                const DenseVariables::ValueCopies& copies) {
  ReaderLock lock(&mu_);
  PS_RETURN_IF_ERROR(CheckReadyLocked());
  PS_ASSIGN_OR_RETURN(const DenseVariables::Work work, variables_->Resolve(grads, copies));
  PS_RETURN_IF_ERROR(tables_->Check(sparse));
  if (!options_.holds_global_step) {
    int64_t seen = global_step_.load();
    while (global_step_hint > seen && !global_step_.compare_exchange_weak(seen, global_step_hint)) {
    }
  }
  // The rows first, all or none; past their reservation nothing of the
  // push can fail, and the variables, which take their own locks, are
  // updated outside the tables' (pushes to variables stay concurrent).
  const int64_t at = global_step_.load();
  PS_RETURN_IF_ERROR(tables_->Apply(sparse, at));
  variables_->Apply(work, LearningRateLocked(), at + 1);
  const int64_t step =
      increment_global_step && options_.holds_global_step ? ++global_step_ : global_step_.load();
  waiters_.Advance(step);  // a pull may wait for a step in async training too
  return step;
}

StatusOr<VariableStore::SyncPushResult> VariableStore::OfferSyncGradients(
    int worker, int64_t computed_at, std::map<std::string, Tensor> grads,
    std::map<std::string, SparseRows> sparse) {
  ReaderLock lock(&mu_);
  PS_RETURN_IF_ERROR(CheckReadyLocked());
  PS_RETURN_IF_ERROR(variables_->Resolve(grads).status());
  PS_RETURN_IF_ERROR(tables_->Check(sparse));
  // A worker's rows that could never fit are refused now, not at the
  // step's end.
  PS_RETURN_IF_ERROR(tables_->CheckFits(sparse));
  return sync_.Offer(worker, computed_at, std::move(grads), std::move(sparse), ApplySyncStep());
}

SyncReplicas::ApplyStep VariableStore::ApplySyncStep() {
  // Runs while this thread holds mu_ (shared), inside the call it is
  // given to.
  return
      [this](SyncAccumulator::Average average, int64_t computed_at)
          ABSL_NO_THREAD_SAFETY_ANALYSIS { ApplySyncStepLocked(std::move(average), computed_at); };
}

void VariableStore::ApplySyncStepLocked(SyncAccumulator::Average average, int64_t computed_at) {
  // Same names and shapes as checked on offer.
  variables_->Apply(*variables_->Resolve(average.dense), LearningRateLocked(), computed_at + 1);
  // The step's rows update at the step they were computed at.
  tables_->ApplyFitting(std::move(average.sparse), computed_at);
  global_step_.store(computed_at + 1);
  waiters_.Advance(computed_at + 1);
}

StatusOr<int64_t> VariableStore::SetLiveReplicas(int live) {
  ReaderLock lock(&mu_);
  return sync_.SetLiveReplicas(live, ApplySyncStep());
}

uint64_t VariableStore::WhenStep(int64_t min_step, Clock::Duration timeout,
                                 StepWaiters::Ready ready) {
  return waiters_.Add(min_step, clock_->Now() + timeout, std::move(ready));
}

Status VariableStore::WaitForStep(int64_t min_step, Clock::Duration timeout,
                                  const std::function<bool()>& cancelled) {
  struct Outcome {
    std::mutex mu;
    std::condition_variable cv;
    bool ended = false;
    Status status;
  };
  auto outcome = std::make_shared<Outcome>();
  const uint64_t id = WhenStep(min_step, timeout, [outcome](const Status& s) {
    std::lock_guard<std::mutex> lock(outcome->mu);
    outcome->status = s;
    outcome->ended = true;
    outcome->cv.notify_all();
  });
  if (id == 0) return OkStatus();
  std::unique_lock<std::mutex> lock(outcome->mu);
  while (!outcome->cv.wait_for(lock, kCancelPoll, [&] { return outcome->ended; })) {
    if (cancelled && cancelled()) {
      lock.unlock();
      CancelStepWait(id);  // ends it, unless it has just ended otherwise
      lock.lock();
    }
  }
  return outcome->status;
}

float VariableStore::learning_rate() const {
  ReaderLock lock(&mu_);
  return LearningRateLocked();
}

float VariableStore::LearningRateLocked() const {
  if (!ready_) return 0;
  return variables_->optimizer().lr_schedule().At(global_step_.load());
}

bool VariableStore::holds_global_step() const {
  ReaderLock lock(&mu_);
  return options_.holds_global_step;
}

uint64_t VariableStore::placement_fingerprint() const {
  ReaderLock lock(&mu_);
  return options_.placement_fingerprint;
}

int64_t VariableStore::num_variables() const {
  ReaderLock lock(&mu_);
  return ready_ ? variables_->size() : 0;
}

int64_t VariableStore::num_bytes() const {
  ReaderLock lock(&mu_);
  return ready_ ? variables_->bytes() + tables_->bytes() : 0;
}

}  // namespace pstrain
