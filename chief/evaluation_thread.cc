#include "chief/evaluation_thread.h"

#include <glog/logging.h>

#include <utility>

#include "core/thread_priority.h"
#include "nn/compute_threads.h"

namespace pstrain {

EvaluationThread::EvaluationThread(StateEvaluation evaluation, int compute_threads, bool idle)
    : evaluation_(std::move(evaluation)),
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

bool EvaluationThread::Start(int64_t step, double training_secs, PsFleet::State state) {
  {
    MutexLock lock(&mu_);
    if (busy_) return false;
    busy_ = true;
    pending_ = Outcome{step, training_secs, EvalResult()};
    state_ = std::move(state);
  }
  changed_.notify_all();
  return true;
}

bool EvaluationThread::busy() {
  MutexLock lock(&mu_);
  return busy_;
}

std::optional<EvaluationThread::Outcome> EvaluationThread::Take() {
  MutexLock lock(&mu_);
  if (!done_) return std::nullopt;
  std::optional<Outcome> out = std::move(done_);
  done_.reset();
  busy_ = false;
  return out;
}

void EvaluationThread::Cancel() {
  MutexLock lock(&mu_);
  AbandonLocked();
  changed_.wait(*lock.native(), [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !busy_; });
}

void EvaluationThread::Abandon() {
  MutexLock lock(&mu_);
  AbandonLocked();
}

void EvaluationThread::AbandonLocked() {
  if (!busy_) return;
  if (done_) {  // done already: dropped now
    done_.reset();
    busy_ = false;
    return;
  }
  cancel_ = true;
  abandoned_ = true;
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
      return stopping_ || state_.has_value();
    });
    if (stopping_) return;
    const PsFleet::State state = std::move(*state_);
    state_.reset();
    Outcome outcome = pending_;
    lock.Unlock();
    outcome.result = evaluation_.Evaluate(state, &cancel_);
    lock.Lock();
    if (abandoned_) {
      busy_ = false;
      abandoned_ = false;
      cancel_ = false;
    } else {
      done_ = std::move(outcome);
    }
    changed_.notify_all();
  }
}

}  // namespace pstrain
