#include "ps/sync_replicas.h"

namespace pstrain {

Status SyncReplicas::Reset(const proto::SyncConfig& config, int64_t step) {
  if (config.enabled() && config.replicas_to_aggregate() < 1) {
    return InvalidArgument("replicas_to_aggregate must be >= 1");
  }
  MutexLock lock(&mu_);
  const int live = accumulator_ ? accumulator_->live_replicas() : -1;
  accumulator_.reset();
  if (config.enabled()) {
    accumulator_ = std::make_unique<SyncAccumulator>(
        SyncAccumulator::Options{config.replicas_to_aggregate(), config.strict()}, step);
    accumulator_->SetLiveReplicas(live);  // nothing pending: completes nothing
  }
  return OkStatus();
}

bool SyncReplicas::enabled() const {
  MutexLock lock(&mu_);
  return accumulator_ != nullptr;
}

StatusOr<SyncReplicas::Result> SyncReplicas::Offer(int worker, int64_t computed_at,
                                                   std::map<std::string, Tensor> grads,
                                                   std::map<std::string, SparseRows> sparse,
                                                   const ApplyStep& apply) {
  MutexLock lock(&mu_);
  if (!accumulator_) return FailedPrecondition("this ps trains asynchronously");
  PS_ASSIGN_OR_RETURN(
      SyncAccumulator::Outcome outcome,
      accumulator_->Offer(worker, computed_at, std::move(grads), std::move(sparse)));
  Result result{proto::ACCEPTED, 0};
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
      CompleteLocked(apply);
      break;
  }
  result.step = accumulator_->step();
  return result;
}

StatusOr<int64_t> SyncReplicas::SetLiveReplicas(int live, const ApplyStep& apply) {
  MutexLock lock(&mu_);
  if (!accumulator_) return FailedPrecondition("this ps trains asynchronously");
  if (accumulator_->SetLiveReplicas(live)) CompleteLocked(apply);
  return accumulator_->step();
}

void SyncReplicas::CompleteLocked(const ApplyStep& apply) {
  const int64_t computed_at = accumulator_->step();
  apply(accumulator_->TakeAverage(), computed_at);
}

SyncReplicas::Stats SyncReplicas::stats() const {
  MutexLock lock(&mu_);
  Stats stats;
  if (accumulator_) {
    stats.pending = accumulator_->pending();
    stats.required = accumulator_->required();
    stats.stale_dropped = accumulator_->stale_dropped();
    stats.duplicates_dropped = accumulator_->duplicates_dropped();
  }
  return stats;
}

std::string SyncReplicas::DescribeStep() const {
  MutexLock lock(&mu_);
  if (!accumulator_) return "";
  return " (" + std::to_string(accumulator_->pending()) + " of " +
         std::to_string(accumulator_->required()) + " gradients for step " +
         std::to_string(accumulator_->step()) + ")";
}

}  // namespace pstrain
