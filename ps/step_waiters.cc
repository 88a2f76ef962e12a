#include "ps/step_waiters.h"

#include <utility>

namespace pstrain {

StepWaiters::StepWaiters(Clock* clock, Describe describe)
    : clock_(clock), describe_(std::move(describe)) {}

StepWaiters::~StepWaiters() {
  std::vector<std::pair<uint64_t, Ready>> ended;
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    for (auto& [id, wait] : waits_) {
      firing_.insert(id);
      ended.emplace_back(id, std::move(wait.ready));
    }
    waits_.clear();
    deadlines_.clear();
    by_step_.clear();
  }
  changed_.notify_all();
  Fire(std::move(ended), Status(Code::kCancelled, "the ps is stopping"));
  if (timer_.joinable()) timer_.join();
}

uint64_t StepWaiters::Add(int64_t min_step, Clock::TimePoint deadline, Ready ready) {
  MutexLock lock(&mu_);
  if (step_ >= min_step) return 0;
  const uint64_t id = next_id_++;
  waits_.emplace(id, Wait{min_step, deadline, std::move(ready)});
  by_step_.emplace(min_step, id);
  const bool earliest = deadlines_.empty() || deadline < deadlines_.begin()->first;
  deadlines_.emplace(deadline, id);
  if (!timer_.joinable()) timer_ = std::thread([this] { RunTimer(); });
  if (earliest) changed_.notify_all();
  return id;
}

StepWaiters::Wait StepWaiters::TakeLocked(uint64_t id) {
  auto it = waits_.find(id);
  Wait wait = std::move(it->second);
  waits_.erase(it);
  by_step_.erase({wait.min_step, id});
  deadlines_.erase({wait.deadline, id});
  firing_.insert(id);
  return wait;
}

void StepWaiters::Cancel(uint64_t id) {
  Ready ready;
  {
    MutexLock lock(&mu_);
    if (waits_.count(id) == 0) {
      // Ended already, or ending now on another thread: wait for that.
      changed_.wait(*lock.native(),
                    [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return firing_.count(id) == 0; });
      return;
    }
    ready = TakeLocked(id).ready;
  }
  std::vector<std::pair<uint64_t, Ready>> ended;
  ended.emplace_back(id, std::move(ready));
  Fire(std::move(ended), Status(Code::kCancelled, "the caller went away"));
}

void StepWaiters::Advance(int64_t step) {
  std::vector<std::pair<uint64_t, Ready>> ended;
  {
    MutexLock lock(&mu_);
    if (step <= step_) return;
    step_ = step;
    while (!by_step_.empty() && by_step_.begin()->first <= step) {
      const uint64_t id = by_step_.begin()->second;
      ended.emplace_back(id, TakeLocked(id).ready);
    }
  }
  Fire(std::move(ended), OkStatus());
}

void StepWaiters::Restart(int64_t step) {
  std::vector<std::pair<uint64_t, Ready>> ended;
  {
    MutexLock lock(&mu_);
    step_ = step;
    while (!waits_.empty()) {
      const uint64_t id = waits_.begin()->first;
      ended.emplace_back(id, TakeLocked(id).ready);
    }
  }
  Fire(std::move(ended), Aborted("the ps was re-initialized (restored) while this pull waited "
                                 "for its step; retry the step"));
}

int64_t StepWaiters::step() const {
  MutexLock lock(&mu_);
  return step_;
}

int StepWaiters::pending() const {
  MutexLock lock(&mu_);
  return static_cast<int>(waits_.size());
}

void StepWaiters::Fire(std::vector<std::pair<uint64_t, Ready>> ended, const Status& outcome) {
  if (ended.empty()) return;
  for (auto& [id, ready] : ended) ready(outcome);
  {
    MutexLock lock(&mu_);
    for (const auto& one : ended) firing_.erase(one.first);
  }
  changed_.notify_all();
}

void StepWaiters::RunTimer() {
  for (;;) {
    std::vector<std::pair<uint64_t, Wait>> expired;
    int64_t step = 0;
    {
      MutexLock lock(&mu_);
      if (stopping_) return;
      if (deadlines_.empty()) {
        changed_.wait(*lock.native(), [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return stopping_ || !deadlines_.empty();
        });
        continue;
      }
      const Clock::TimePoint first = deadlines_.begin()->first;
      if (clock_->Now() < first) {
        // Until the earliest deadline, or an earlier one comes.
        clock_->WaitUntil(
            lock.native(), &changed_, first, [this, first]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
              return stopping_ || deadlines_.empty() || deadlines_.begin()->first < first;
            });
        continue;
      }
      const Clock::TimePoint now = clock_->Now();
      while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
        const uint64_t id = deadlines_.begin()->second;
        expired.emplace_back(id, TakeLocked(id));
      }
      step = step_;
    }
    const std::string lacks = describe_ ? describe_() : "";
    for (auto& [id, wait] : expired) {
      wait.ready(DeadlineExceeded("at step " + std::to_string(step) + ", still waiting for step " +
                                  std::to_string(wait.min_step) + lacks));
    }
    {
      MutexLock lock(&mu_);
      for (const auto& one : expired) firing_.erase(one.first);
    }
    changed_.notify_all();
  }
}

}  // namespace pstrain
