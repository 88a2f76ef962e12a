#include "ps/sync_accumulator.h"

#include <algorithm>
#include <vector>

#include "ps/embedding/key_index.h"

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

StatusOr<SyncAccumulator::Outcome> SyncAccumulator::Offer(
    int worker, int64_t computed_at, std::map<std::string, Tensor> grads,
    std::map<std::string, SparseRows> sparse) {
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
    for (const Received& r : received_) {
      if (r.worker == worker) {
        ++duplicates_dropped_;
        return Outcome::kDuplicate;
      }
    }
  }
  if (!received_.empty()) {
    const auto& first = received_.front().dense;
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
  received_.push_back({worker, std::move(grads), std::move(sparse)});
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

SyncAccumulator::Average SyncAccumulator::TakeAverage() {
  // Sum in worker order (stable for a worker's repeats), not arrival order.
  std::stable_sort(received_.begin(), received_.end(),
                   [](const Received& a, const Received& b) { return a.worker < b.worker; });
  Average average;
  average.sparse = AverageRows();
  std::map<std::string, Tensor> sum = std::move(received_.front().dense);
  const float scale = 1.0f / static_cast<float>(received_.size());
  std::vector<const float*> parts(received_.size());
  for (auto& [name, total] : sum) {
    // Each element summed over the gradients in worker order and scaled
    // (the same rounding as summing gradient after gradient), a block at a
    // time in a buffer that stays in L1: every gradient is read once.
    float* t = total.data();
    parts[0] = t;
    for (size_t r = 1; r < received_.size(); ++r) parts[r] = received_[r].dense.at(name).data();
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
  average.dense = std::move(sum);
  return average;
}

std::map<std::string, SparseRows> SyncAccumulator::AverageRows() const {
  // Per table: every gradient's keys in worker order, each key's rows
  // summed where it first appeared, then divided by its count.
  std::map<std::string, std::vector<const SparseRows*>> by_table;
  for (const Received& r : received_) {
    for (const auto& [table, rows] : r.sparse) by_table[table].push_back(&rows);
  }
  std::map<std::string, SparseRows> out;
  for (const auto& [table, parts] : by_table) {
    const int64_t dim = parts.front()->rows.rank() == 2 ? parts.front()->rows.dim(1) : 0;
    KeyIndex place;
    std::vector<int64_t> keys;
    std::vector<float> sums;
    std::vector<int> counts;
    for (const SparseRows* part : parts) {
      for (size_t i = 0; i < part->keys.size(); ++i) {
        uint32_t at = place.Find(part->keys[i]);
        if (at == KeyIndex::kAbsent) {
          at = static_cast<uint32_t>(keys.size());
          place.Insert(part->keys[i], at);
          keys.push_back(part->keys[i]);
          sums.resize(sums.size() + dim, 0.0f);
          counts.push_back(0);
        }
        const float* row = part->rows.data() + i * dim;
        float* sum = sums.data() + at * dim;
        for (int64_t j = 0; j < dim; ++j) sum[j] += row[j];
        ++counts[at];
      }
    }
    SparseRows& average = out[table];
    average.rows = Tensor({static_cast<int64_t>(keys.size()), dim});
    for (size_t k = 0; k < keys.size(); ++k) {
      const float scale = 1.0f / static_cast<float>(counts[k]);
      for (int64_t j = 0; j < dim; ++j) average.rows[k * dim + j] = sums[k * dim + j] * scale;
    }
    average.keys = std::move(keys);
  }
  return out;
}

void SyncAccumulator::Reset(int64_t step) {
  received_.clear();
  step_ = step;
}

}  // namespace pstrain
