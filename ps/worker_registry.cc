#include "ps/worker_registry.h"

#include <algorithm>

namespace pstrain {

void WorkerRegistry::Heartbeat(int worker, int64_t local_step, float loss) {
  MutexLock lock(&mu_);
  Entry& e = workers_[worker];
  e.last_seen = clock_->Now();
  e.local_step = local_step;
  if (loss >= 0) e.loss = loss;
  e.done = false;  // a restarted worker rejoins
  e.failure.clear();
}

void WorkerRegistry::MarkDone(int worker, const std::string& failure) {
  MutexLock lock(&mu_);
  Entry& e = workers_[worker];
  e.last_seen = clock_->Now();
  e.done = true;
  e.failure = failure;
}

std::vector<WorkerRegistry::WorkerState> WorkerRegistry::Snapshot() const {
  MutexLock lock(&mu_);
  const auto now = clock_->Now();
  std::vector<WorkerState> out;
  for (const auto& [w, e] : workers_) {
    out.push_back({w, std::chrono::duration<double>(now - e.last_seen).count(), e.local_step,
                   e.done, e.loss, e.failure});
  }
  return out;
}

int64_t WorkerRegistry::MinLiveLocalStep(std::chrono::duration<double> timeout) const {
  MutexLock lock(&mu_);
  const auto now = clock_->Now();
  int64_t min = -1;
  for (const auto& [w, e] : workers_) {
    if (e.done || now - e.last_seen > timeout) continue;
    min = min < 0 ? e.local_step : std::min(min, e.local_step);
  }
  return min;
}

}  // namespace pstrain
