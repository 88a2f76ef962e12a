#include "ps/sync_accumulator.h"

#include <algorithm>
#include <vector>

namespace pstrain {

const char* OutcomeName(SyncAccumulator::Outcome outcome) {
  switch (outcome) {
    case SyncAccumulator::Outcome::kAccepted:
      return "accepted";
    case SyncAccumulator::Outcome::kStepComplete:
      return "step complete";
    case SyncAccumulator::Outcome::kStale:
      return "stale";
    case SyncAccumulator::Outcome::kDuplicate:
      return "duplicate";
  }
  return "?";
}

SyncAccumulator::SyncAccumulator(const Options& options, int64_t step)
    : options_(options), step_(step) {}

StatusOr<SyncAccumulator::Outcome> SyncAccumulator::Offer(int worker, int64_t computed_at,
                                                          std::map<std::string, Tensor> grads) {
  if (computed_at > step_) {
    return Aborted("worker:" + std::to_string(worker) + " sent a gradient computed at step " +
                   std::to_string(computed_at) + ", but this ps is at step " +
                   std::to_string(step_) + " (was this ps restored?); retry the step");
  }
  if (computed_at < step_) {
    ++stale_dropped_;
    return Outcome::kStale;
  }
  if (options_.strict) {
    for (const auto& [w, g] : received_) {
      if (w == worker) {
        ++duplicates_dropped_;
        return Outcome::kDuplicate;
      }
    }
  }
  if (!received_.empty()) {
    const auto& first = received_.front().second;
    bool same = first.size() == grads.size();
    for (auto it = grads.begin(); same && it != grads.end(); ++it) {
      auto f = first.find(it->first);
      same = f != first.end() && f->second.shape() == it->second.shape();
    }
    if (!same) {
      return InvalidArgument("worker:" + std::to_string(worker) +
                             " sent gradients for other variables or shapes than step " +
                             std::to_string(step_) + "'s first gradient");
    }
  }
  received_.emplace_back(worker, std::move(grads));
  if (static_cast<int>(received_.size()) >= required()) return Outcome::kStepComplete;
  return Outcome::kAccepted;
}

int SyncAccumulator::required() const {
  if (live_replicas_ < 0) return options_.replicas_to_aggregate;
  return std::max(1, std::min(options_.replicas_to_aggregate, live_replicas_));
}

bool SyncAccumulator::SetLiveReplicas(int live) {
  live_replicas_ = live;
  return !received_.empty() && static_cast<int>(received_.size()) >= required();
}

std::map<std::string, Tensor> SyncAccumulator::TakeAverage() {
  // Sum in worker order (stable for a worker's repeats), not arrival order.
  std::stable_sort(received_.begin(), received_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::map<std::string, Tensor> sum = std::move(received_.front().second);
  const float scale = 1.0f / static_cast<float>(received_.size());
  std::vector<const float*> parts(received_.size());
  for (auto& [name, total] : sum) {
    // Each element summed over the gradients in worker order and scaled
    // (the same rounding as summing gradient after gradient), a block at a
    // time in a buffer that stays in L1: every gradient is read once.
    float* t = total.data();
    parts[0] = t;
    for (size_t r = 1; r < received_.size(); ++r) parts[r] = received_[r].second.at(name).data();
    constexpr int64_t kBlock = 1024;
    float acc[kBlock];
    const int64_t n = total.size();
    for (int64_t b = 0; b < n; b += kBlock) {
      const int64_t m = std::min(kBlock, n - b);
      const float* first = parts[0] + b;
#pragma omp simd
      for (int64_t i = 0; i < m; ++i) acc[i] = first[i];
      for (size_t r = 1; r < parts.size(); ++r) {
        const float* g = parts[r] + b;
#pragma omp simd
        for (int64_t i = 0; i < m; ++i) acc[i] += g[i];
      }
#pragma omp simd
      for (int64_t i = 0; i < m; ++i) t[b + i] = acc[i] * scale;
    }
  }
  received_.clear();
  ++step_;
  return sum;
}

void SyncAccumulator::Reset(int64_t step) {
  received_.clear();
  step_ = step;
}

}  // namespace pstrain
