#include "ps/variable_store.h"

#include <glog/logging.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "core/flush_denormals.h"
#include "core/halves.h"
#include "ps/update_rules.h"

namespace pstrain {
namespace {

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%016" PRIx64, v);
  return buf;
}

}  // namespace

StatusOr<uint64_t> VariableStore::Footprint(const InitOptions& options, size_t num_slots,
                                            const std::map<std::string, Tensor>& values) const {
  for (const std::string& name : options.non_trainable) {
    if (!values.count(name)) {
      return InvalidArgument("non-trainable " + name + " is not a variable on this ps");
    }
  }
  uint64_t footprint = 0;
  for (const auto& [name, value] : values) {
    if (name.empty()) return InvalidArgument("variable with an empty name");
    const bool trainable = !options.non_trainable.count(name);
    const uint64_t copies = 1 + (trainable ? num_slots + (options.ema_decay > 0 ? 1 : 0) : 0);
    footprint += copies * value.bytes();
  }
  if (footprint > max_bytes_) {
    return ResourceExhausted(std::to_string(values.size()) + " variables with their slots and " +
                             "shadows need " + std::to_string(footprint) +
                             " bytes, more than this ps may hold (" + std::to_string(max_bytes_) +
                             ")");
  }
  return footprint;
}

StatusOr<std::map<std::string, std::unique_ptr<VariableStore::Variable>>>
VariableStore::MakeVariables(const InitOptions& options, const Optimizer& optimizer,
                             std::map<std::string, Tensor> values,
                             std::map<std::string, Tensor> state) {
  const std::vector<std::string> slot_names = optimizer.slot_names();
  // Takes the saved state tensor `name + "/" + suffix` into *dst if there is one.
  auto take = [&state](const std::string& name, const std::string& suffix, Tensor* dst) {
    auto it = state.find(name + "/" + suffix);
    if (it == state.end()) return OkStatus();
    if (it->second.shape() != dst->shape()) {
      return InvalidArgument("saved " + it->first + " has shape " +
                             ShapeString(it->second.shape()) + ", variable has " +
                             ShapeString(dst->shape()));
    }
    *dst = std::move(it->second);
    state.erase(it);
    return OkStatus();
  };
  std::map<std::string, std::unique_ptr<Variable>> vars;
  for (auto& [name, value] : values) {
    auto v = std::make_unique<Variable>();
    MutexLock vlock(&v->mu);  // no one else sees it yet; the analysis does not know
    v->trainable = !options.non_trainable.count(name);
    v->shape = value.shape();
    for (size_t s = 0; v->trainable && s < slot_names.size(); ++s) {
      v->slots.emplace_back(value.shape());
      v->slots.back().Fill(optimizer.slot_initial_value(static_cast<int>(s)));
      PS_RETURN_IF_ERROR(take(name, slot_names[s], &v->slots.back()));
    }
    if (v->trainable && options.ema_decay > 0) {
      v->ema = value;  // TF starts a shadow at the variable's value
      PS_RETURN_IF_ERROR(take(name, kEmaSuffix, &v->ema));
    }
    v->update_count = options.global_step;
    v->value = std::make_shared<Tensor>(std::move(value));
    vars.emplace(name, std::move(v));
  }
  if (!state.empty()) {
    return InvalidArgument("saved tensor " + state.begin()->first +
                           " matches no variable, slot or shadow on this ps");
  }
  return vars;
}

Status VariableStore::Initialize(const InitOptions& options, std::unique_ptr<Optimizer> optimizer,
                                 std::map<std::string, Tensor> values,
                                 std::map<std::string, Tensor> state) {
  // Everything the store will hold, counted before any slot is allocated.
  PS_ASSIGN_OR_RETURN(const uint64_t footprint,
                      Footprint(options, optimizer->slot_names().size(), values));
  PS_ASSIGN_OR_RETURN(auto vars,
                      MakeVariables(options, *optimizer, std::move(values), std::move(state)));
  if (options.sync.enabled() && options.sync.replicas_to_aggregate() < 1) {
    return InvalidArgument("replicas_to_aggregate must be >= 1");
  }
  std::map<std::string, std::unique_ptr<EmbeddingTable>> tables;
  for (const proto::EmbeddingTableConfig& config : options.tables) {
    if (vars.count(config.name()) || tables.count(config.name())) {
      return InvalidArgument("embedding table " + config.name() +
                             " is named as a variable or another table");
    }
    PS_ASSIGN_OR_RETURN(
        std::unique_ptr<EmbeddingTable> table,
        EmbeddingTable::Create(config, options.optimizer_config, options.ps_name, &budget_));
    table->SetUpdateCount(options.global_step);  // as each variable's
    tables.emplace(config.name(), std::move(table));
  }
  WriterLock lock(&mu_);
  // What the store held goes first: its tables give their bytes back as
  // they go.
  tables_.clear();
  budget_.Release(variables_reserved_);
  variables_reserved_ = 0;
  if (!budget_.TryReserve(footprint)) {
    return ResourceExhausted("the variables need " + std::to_string(footprint) + " bytes, but " +
                             std::to_string(budget_.used()) + " of this ps's " +
                             std::to_string(max_bytes_) + " are held");
  }
  variables_reserved_ = footprint;
  {
    MutexLock slock(&sync_mu_);
    // A restore keeps what the chief said of the workers.
    const int live = accumulator_ ? accumulator_->live_replicas() : -1;
    accumulator_.reset();
    if (options.sync.enabled()) {
      accumulator_ = std::make_unique<SyncAccumulator>(
          SyncAccumulator::Options{options.sync.replicas_to_aggregate(), options.sync.strict()},
          options.global_step);
      accumulator_->SetLiveReplicas(live);  // nothing pending: completes nothing
    }
  }
  variables_ = std::move(vars);
  tables_ = std::move(tables);
  {
    MutexLock sparse_lock(&sparse_mu_);
    last_expiry_.clear();
  }
  optimizer_ = std::move(optimizer);
  options_ = options;
  global_step_.store(options.global_step);
  waiters_.Restart(options.global_step);
  ready_ = true;
  return OkStatus();
}

bool VariableStore::ready() const {
  ReaderLock lock(&mu_);
  return ready_;
}

Status VariableStore::CheckPlacement(uint64_t fingerprint) const {
  ReaderLock lock(&mu_);
  if (!ready_) return Unavailable("variables are not initialized (is this ps restarting?)");
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
  if (!ready_) return Unavailable("variables are not initialized (is this ps restarting?)");
  auto it = variables_.find(name);
  if (it == variables_.end()) return NotFound("gradient for unknown variable " + name);
  if (it->second->shape != shape) {
    return InvalidArgument("gradient for " + name + " has shape " + ShapeString(shape) +
                           ", variable has " + ShapeString(it->second->shape));
  }
  return OkStatus();
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
  std::vector<std::pair<std::string, SharedTensor>> out;
  auto copy = [&out](const std::string& name, Variable& v) {
    MutexLock vlock(&v.mu);
    out.emplace_back(name, v.value);
  };
  if (names.empty()) {
    for (auto& [name, v] : variables_) copy(name, *v);
    return out;
  }
  for (const std::string& name : names) {
    auto it = variables_.find(name);
    if (it == variables_.end()) return NotFound("no variable " + name + " on this ps");
    copy(name, *it->second);
  }
  return out;
}

StatusOr<EmbeddingTable*> VariableStore::TableLocked(const std::string& table) const {
  auto it = tables_.find(table);
  if (it == tables_.end()) return NotFound("no embedding table " + table + " on this ps");
  return it->second.get();
}

Status VariableStore::CheckKeys(const std::string& table, const std::vector<int64_t>& keys) const {
  ReaderLock lock(&mu_);
  if (!ready_) return Unavailable("variables are not initialized (is this ps restarting?)");
  PS_ASSIGN_OR_RETURN(EmbeddingTable * t, TableLocked(table));
  return t->CheckKeys(keys);
}

StatusOr<int> VariableStore::TableDim(const std::string& table) const {
  ReaderLock lock(&mu_);
  if (!ready_) return Unavailable("variables are not initialized (is this ps restarting?)");
  PS_ASSIGN_OR_RETURN(EmbeddingTable * t, TableLocked(table));
  return t->dim();
}

StatusOr<Tensor> VariableStore::ReadRows(const std::string& table,
                                         const std::vector<int64_t>& keys) const {
  ReaderLock lock(&mu_);
  if (!ready_) return Unavailable("variables are not initialized (is this ps restarting?)");
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
  PS_ASSIGN_OR_RETURN(EmbeddingTable * t, TableLocked(table));
  MutexLock sparse_lock(&sparse_mu_);
  t->StartDeltas();
  return OkStatus();
}

StatusOr<std::vector<std::string>> VariableStore::TableSlots(const std::string& table) const {
  ReaderLock lock(&mu_);
  PS_ASSIGN_OR_RETURN(EmbeddingTable * t, TableLocked(table));
  return t->slot_names();
}

Status VariableStore::WriteTableRows(const std::string& table,
                                     const EmbeddingTable::RowBlock& rows) {
  ReaderLock lock(&mu_);
  if (!ready_) return Unavailable("variables are not initialized (is this ps restarting?)");
  PS_ASSIGN_OR_RETURN(EmbeddingTable * t, TableLocked(table));
  PS_RETURN_IF_ERROR(t->CheckKeys(rows.keys));
  MutexLock sparse_lock(&sparse_mu_);
  return t->WriteRows(rows, global_step_.load());
}

StatusOr<int64_t> VariableStore::EraseTableRows(const std::string& table,
                                                const std::vector<int64_t>& keys) {
  ReaderLock lock(&mu_);
  if (!ready_) return Unavailable("variables are not initialized (is this ps restarting?)");
  PS_ASSIGN_OR_RETURN(EmbeddingTable * t, TableLocked(table));
  MutexLock sparse_lock(&sparse_mu_);
  return t->EraseRows(keys);
}

std::vector<VariableStore::TableStats> VariableStore::table_stats() const {
  ReaderLock lock(&mu_);
  std::vector<TableStats> out;
  for (const auto& [name, table] : tables_) out.push_back({name, table->dim(), table->stats()});
  return out;
}

StatusOr<std::vector<std::pair<VariableStore::Variable*, const Tensor*>>>
VariableStore::ResolveLocked(const std::map<std::string, Tensor>& grads) {
  std::vector<std::pair<Variable*, const Tensor*>> work;
  for (const auto& [name, grad] : grads) {
    auto it = variables_.find(name);
    if (it == variables_.end()) return NotFound("gradient for unknown variable " + name);
    if (it->second->shape != grad.shape()) {
      return InvalidArgument("gradient for " + name + " has shape " + ShapeString(grad.shape()) +
                             ", variable has " + ShapeString(it->second->shape));
    }
    work.emplace_back(it->second.get(), &grad);
  }
  return work;
}

Tensor& VariableStore::Writable(Variable* v) {
  // Every copy of the pointer is made under v->mu, which the caller holds:
  // a count of one means no reader can see the change.
  if (v->value.use_count() > 1) v->value = std::make_shared<Tensor>(*v->value);
  return *v->value;
}

void VariableStore::ApplyLocked(const std::vector<std::pair<Variable*, const Tensor*>>& work) {
  ScopedFlushDenormals flush;  // as TensorFlow's update ops run
  const float lr = LearningRateLocked();
  // TF applies the averages after the step's update, with num_updates the
  // global_step that update produced.
  const float decay = EmaDecay(options_.ema_decay, global_step_.load() + 1);
  for (auto& [var, grad] : work) {
    MutexLock vlock(&var->mu);
    Tensor& updated = Writable(var);
    if (!var->trainable) {
      float* value = updated.data();
      const float* delta = grad->data();
      for (int64_t i = 0; i < updated.size(); ++i) value[i] -= delta[i];
      continue;
    }
    const int64_t count = ++var->update_count;
    // Every update rule is element by element: a range of the variable at a
    // time, with its slots' and shadow's same range.
    // Both halves run while this thread holds var->mu and mu_.
    std::vector<Tensor>* const var_slots = &var->slots;
    float* const shadow = options_.ema_decay > 0 ? var->ema.data() : nullptr;
    Optimizer* const optimizer = optimizer_.get();
    auto apply = [&, grad = grad](int64_t begin, int64_t end) {
      ScopedFlushDenormals flush_here;  // on the second thread too
      std::vector<float*> slots;
      for (Tensor& s : *var_slots) slots.push_back(s.data() + begin);
      optimizer->Apply(updated.data() + begin, slots, grad->data() + begin, end - begin, lr, count);
      if (shadow != nullptr) {
        const float* value = updated.data();
        for (int64_t i = begin; i < end; ++i) EmaUpdate(&shadow[i], value[i], decay);
      }
    };
    // A worker waits for its push to be applied: a big variable's update
    // (mnist's local3 holds 3.2 M of its 3.3 M parameters) goes faster on
    // two cores than on one.
    RunInHalves(grad->size(), kSplitElements, apply);
  }
}

StatusOr<std::vector<std::pair<std::string, Tensor>>> VariableStore::ReadState() const {
  ReaderLock lock(&mu_);
  if (!ready_) return Unavailable("variables are not initialized (is this ps restarting?)");
  const std::vector<std::string> slot_names = optimizer_->slot_names();
  std::vector<std::pair<std::string, Tensor>> out;
  for (const auto& [name, v] : variables_) {
    MutexLock vlock(&v->mu);
    out.emplace_back(name, *v->value);
    for (size_t s = 0; s < v->slots.size(); ++s) {
      out.emplace_back(name + "/" + slot_names[s], v->slots[s]);
    }
    if (v->trainable && options_.ema_decay > 0) out.emplace_back(name + "/" + kEmaSuffix, v->ema);
  }
  return out;
}

StatusOr<int64_t> VariableStore::ApplyGradients(const std::map<std::string, Tensor>& grads,
                                                bool increment_global_step,
                                                int64_t global_step_hint,
                                                const std::map<std::string, SparseRows>& sparse) {
  ReaderLock lock(&mu_);
  if (!ready_) return Unavailable("variables are not initialized (is this ps restarting?)");
  PS_ASSIGN_OR_RETURN(auto work, ResolveLocked(grads));
  PS_RETURN_IF_ERROR(CheckSparseLocked(sparse));
  if (!options_.holds_global_step) {
    int64_t seen = global_step_.load();
    while (global_step_hint > seen && !global_step_.compare_exchange_weak(seen, global_step_hint)) {
    }
  }
  if (!tables_.empty()) {
    // The rows first, all or none; past their reservation nothing of the
    // push can fail, and the variables, which take their own locks, are
    // updated outside the tables' (pushes to variables stay concurrent).
    MutexLock sparse_lock(&sparse_mu_);
    PS_ASSIGN_OR_RETURN(auto plans, ReserveRowsLocked(sparse));
    ApplyRowsLocked(sparse, plans, global_step_.load());
  }
  ApplyLocked(work);
  const int64_t step =
      increment_global_step && options_.holds_global_step ? ++global_step_ : global_step_.load();
  waiters_.Advance(step);  // a pull may wait for a step in async training too
  return step;
}

Status VariableStore::CheckSparseLocked(const std::map<std::string, SparseRows>& sparse) const {
  for (const auto& [name, rows] : sparse) {
    auto it = tables_.find(name);
    if (it == tables_.end()) return NotFound("rows for unknown embedding table " + name);
    const Shape expected = {static_cast<int64_t>(rows.keys.size()), it->second->dim()};
    if (rows.rows.shape() != expected) {
      return InvalidArgument("rows for embedding table " + name + " have shape " +
                             ShapeString(rows.rows.shape()) + ", " +
                             std::to_string(rows.keys.size()) + " keys of dim " +
                             std::to_string(it->second->dim()) + " need " + ShapeString(expected));
    }
  }
  return OkStatus();
}

StatusOr<std::map<std::string, EmbeddingTable::Plan>> VariableStore::ReserveRowsLocked(
    const std::map<std::string, SparseRows>& sparse) {
  std::map<std::string, EmbeddingTable::Plan> plans;
  for (const auto& [name, rows] : sparse) {
    const EmbeddingTable& table = *tables_.at(name);
    EmbeddingTable::Plan plan = table.PlanApply(rows);
    if (plan.bytes > 0 && !budget_.TryReserve(plan.bytes)) {
      for (const auto& [done, p] : plans) budget_.Release(p.bytes);
      return table.OverBudget(plan);
    }
    plans.emplace(name, std::move(plan));
  }
  return plans;
}

void VariableStore::ApplyRowsLocked(const std::map<std::string, SparseRows>& sparse,
                                    const std::map<std::string, EmbeddingTable::Plan>& plans,
                                    int64_t step) {
  // Every table takes part in every push, as every variable of a TF
  // optimizer takes part in each apply_gradients: one without rows in it
  // counts the update (Adam's t), and TF's sparse Adam decays its rows.
  for (const auto& [name, table] : tables_) {
    auto it = sparse.find(name);
    if (it != sparse.end()) {
      table->ApplyPlanned(it->second, plans.at(name), step);
    } else {
      SparseRows none;
      none.rows = Tensor({0, table->dim()});
      table->ApplyPlanned(none, table->PlanApply(none), step);
    }
  }
  for (const auto& [name, table] : tables_) {
    const int64_t ttl = table->config().ttl_steps();
    if (ttl <= 0) continue;
    int64_t& last = last_expiry_[name];
    if (step - last < std::max<int64_t>(1, ttl / 8)) continue;
    last = step;
    table->Expire(step);
  }
}

StatusOr<VariableStore::SyncPushResult> VariableStore::OfferSyncGradients(
    int worker, int64_t computed_at, std::map<std::string, Tensor> grads,
    std::map<std::string, SparseRows> sparse) {
  ReaderLock lock(&mu_);
  if (!ready_) return Unavailable("variables are not initialized (is this ps restarting?)");
  PS_RETURN_IF_ERROR(ResolveLocked(grads).status());
  PS_RETURN_IF_ERROR(CheckSparseLocked(sparse));
  MutexLock slock(&sync_mu_);
  if (!accumulator_) return FailedPrecondition("this ps trains asynchronously");
  if (!sparse.empty()) {
    // A worker's rows that could never fit are refused now, not at the
    // step's end.
    MutexLock sparse_lock(&sparse_mu_);
    PS_ASSIGN_OR_RETURN(auto plans, ReserveRowsLocked(sparse));
    for (const auto& [name, plan] : plans) budget_.Release(plan.bytes);
  }
  PS_ASSIGN_OR_RETURN(
      SyncAccumulator::Outcome outcome,
      accumulator_->Offer(worker, computed_at, std::move(grads), std::move(sparse)));
  SyncPushResult result{proto::ACCEPTED, 0};
  switch (outcome) {
    case SyncAccumulator::Outcome::kAccepted:
      break;
    case SyncAccumulator::Outcome::kStale:
      result.outcome = proto::STALE;
      break;
    case SyncAccumulator::Outcome::kDuplicate:
      result.outcome = proto::DUPLICATE;
      break;
    case SyncAccumulator::Outcome::kStepComplete:
      result.outcome = proto::STEP_COMPLETE;
      CompleteStepLocked();
      break;
  }
  result.step = accumulator_->step();
  return result;
}

void VariableStore::CompleteStepLocked() {
  SyncAccumulator::Average average = accumulator_->TakeAverage();
  ApplyLocked(*ResolveLocked(average.dense));  // same names and shapes as checked on offer
  if (!tables_.empty()) {
    MutexLock sparse_lock(&sparse_mu_);
    std::map<std::string, EmbeddingTable::Plan> plans;
    for (auto it = average.sparse.begin(); it != average.sparse.end();) {
      auto one = ReserveRowsLocked({{it->first, it->second}});
      if (one.ok()) {
        plans[it->first] = std::move(one->at(it->first));
        ++it;
        continue;
      }
      ++rows_refused_;
      LOG(ERROR) << one.status().ToString() << " (sync step " << accumulator_->step() - 1
                 << "'s rows of this table are dropped)";
      it = average.sparse.erase(it);
    }
    // The step's rows update at the step they were computed at.
    ApplyRowsLocked(average.sparse, plans, accumulator_->step() - 1);
  }
  global_step_.store(accumulator_->step());
  waiters_.Advance(accumulator_->step());
}

StatusOr<int64_t> VariableStore::SetLiveReplicas(int live) {
  ReaderLock lock(&mu_);
  MutexLock slock(&sync_mu_);
  if (!accumulator_) return FailedPrecondition("this ps trains asynchronously");
  if (accumulator_->SetLiveReplicas(live)) CompleteStepLocked();
  return accumulator_->step();
}

std::string VariableStore::DescribeStepLocked() const {
  if (!accumulator_) return "";
  return " (" + std::to_string(accumulator_->pending()) + " of " +
         std::to_string(accumulator_->required()) + " gradients for step " +
         std::to_string(accumulator_->step()) + ")";
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

bool VariableStore::sync_enabled() const {
  MutexLock slock(&sync_mu_);
  return accumulator_ != nullptr;
}

VariableStore::SyncStats VariableStore::sync_stats() const {
  MutexLock slock(&sync_mu_);
  SyncStats stats;
  if (accumulator_) {
    stats.pending = accumulator_->pending();
    stats.required = accumulator_->required();
    stats.stale_dropped = accumulator_->stale_dropped();
    stats.duplicates_dropped = accumulator_->duplicates_dropped();
  }
  return stats;
}

float VariableStore::learning_rate() const {
  ReaderLock lock(&mu_);
  return LearningRateLocked();
}

float VariableStore::LearningRateLocked() const {
  if (!ready_) return 0;
  return optimizer_->lr_schedule().At(global_step_.load());
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
  return static_cast<int64_t>(variables_.size());
}

int64_t VariableStore::num_bytes() const {
  ReaderLock lock(&mu_);
  int64_t n = 0;
  for (const auto& [name, v] : variables_) {
    MutexLock vlock(&v->mu);
    n += v->value->bytes() * (1 + v->slots.size());
  }
  for (const auto& [name, table] : tables_) n += table->stats().bytes;
  return n;
}

}  // namespace pstrain
