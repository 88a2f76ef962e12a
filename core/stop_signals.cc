#include "core/stop_signals.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>

#include <thread>

namespace pstrain {

void StopNotice::Notify(const std::string& reason) { Latch(reason, 0); }

void StopNotice::NotifySignal(int signo) {
  Latch(std::string("signal ") + strsignal(signo), signo);
}

void StopNotice::Latch(const std::string& reason, int signo) {
  MutexLock lock(&mu_);
  if (requested_) return;
  requested_ = true;
  reason_ = reason;
  signal_ = signo;
  cv_.notify_all();
}

int StopNotice::signal() const {
  MutexLock lock(&mu_);
  return signal_;
}

bool StopNotice::requested() const {
  MutexLock lock(&mu_);
  return requested_;
}

std::string StopNotice::reason() const {
  MutexLock lock(&mu_);
  return reason_;
}

std::string StopNotice::Wait() const {
  MutexLock lock(&mu_);
  cv_.wait(*lock.native(), [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return requested_; });
  return reason_;
}

bool StopNotice::WaitFor(Clock::Duration timeout, Clock* clock) const {
  MutexLock lock(&mu_);
  return clock->WaitFor(lock.native(), &cv_, timeout,
                        [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return requested_; });
}

void HandleStopSignals(StopNotice* notice) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set, notice] {
    for (;;) {
      int signo = 0;
      if (sigwait(&set, &signo) == 0) notice->NotifySignal(signo);
    }
  }).detach();
}

}  // namespace pstrain
