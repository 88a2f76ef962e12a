#include "chief/evaluation_thread.h"

#include <glog/logging.h>

#include <algorithm>
#include <utility>

#include "core/thread_priority.h"
#include "nn/compute_threads.h"

namespace pstrain {

int EvaluationThread::MaxWaitingFor(const nn::Model& model) {
  if (!model.lookups().empty()) return 0;
  int64_t bytes = 0;
  for (const nn::VariableSpec& v : model.variables()) {
    bytes += 3 * NumElements(v.shape) * static_cast<int64_t>(sizeof(float));
  }
  constexpr int64_t kWaitingBytes = int64_t{512} << 20;
  return static_cast<int>(std::min<int64_t>(16, kWaitingBytes / std::max<int64_t>(bytes, 1)));
}

EvaluationThread::EvaluationThread(StateEvaluation evaluation, int compute_threads, bool idle,
                                   int max_waiting)
    : evaluation_(std::move(evaluation)),
      max_waiting_(static_cast<size_t>(std::max(max_waiting, 0))),
      thread_([this, compute_threads, idle] { Run(compute_threads, idle); }) {}

EvaluationThread::~EvaluationThread() {
  cancel_ = true;
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

bool EvaluationThread::BusyLocked() const {
  return running_ || !waiting_.empty() || !done_.empty();
}

bool EvaluationThread::FullLocked() const {
  return (running_ ? 1 : 0) + waiting_.size() + done_.size() > max_waiting_;
}

bool EvaluationThread::full() {
  MutexLock lock(&mu_);
  return FullLocked();
}

bool EvaluationThread::Start(int64_t step, double training_secs, PsFleet::State state) {
  {
    MutexLock lock(&mu_);
    if (FullLocked()) return false;
    waiting_.push_back({Outcome{step, training_secs, EvalResult()}, std::move(state)});
  }
  changed_.notify_all();
  return true;
}

bool EvaluationThread::busy() {
  MutexLock lock(&mu_);
  return BusyLocked();
}

std::optional<EvaluationThread::Outcome> EvaluationThread::TakeLocked() {
  if (done_.empty()) return std::nullopt;
  Outcome out = std::move(done_.front());
  done_.pop_front();
  return out;
}

std::optional<EvaluationThread::Outcome> EvaluationThread::Take() {
  MutexLock lock(&mu_);
  return TakeLocked();
}

std::optional<EvaluationThread::Outcome> EvaluationThread::WaitAndTake() {
  MutexLock lock(&mu_);
  changed_.wait(*lock.native(), [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !done_.empty() || !BusyLocked();
  });
  return TakeLocked();
}

void EvaluationThread::Cancel() {
  MutexLock lock(&mu_);
  AbandonLocked();
  changed_.wait(*lock.native(),
                [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !BusyLocked(); });
}

void EvaluationThread::Abandon() {
  MutexLock lock(&mu_);
  AbandonLocked();
}

void EvaluationThread::AbandonLocked() {
  waiting_.clear();
  done_.clear();
  if (running_) {
    cancel_ = true;
    abandoned_ = true;
  }
}

void EvaluationThread::Run(int compute_threads, bool idle) {
  // Before the pool starts, so that its threads inherit the priority.
  if (idle) {
    Status s = RunThisThreadAtIdlePriority();
    if (!s.ok()) LOG(WARNING) << "evaluating at normal priority: " << s.ToString();
  }
  nn::SetComputeThreads(compute_threads);
  MutexLock lock(&mu_);
  for (;;) {
    changed_.wait(*lock.native(), [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stopping_ || !waiting_.empty();
    });
    if (stopping_) return;
    Waiting next = std::move(waiting_.front());
    waiting_.pop_front();
    running_ = true;
    lock.Unlock();
    next.outcome.result = evaluation_.Evaluate(next.state, &cancel_);
    lock.Lock();
    running_ = false;
    if (abandoned_) {
      abandoned_ = false;
      cancel_ = false;
    } else {
      done_.push_back(std::move(next.outcome));
    }
    changed_.notify_all();
  }
}

}  // namespace pstrain
