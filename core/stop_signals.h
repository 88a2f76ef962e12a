// StopNotice and stop signals: how a task learns it should stop.
//
// SIGTERM and SIGINT become an ordinary StopNotice::Notify on a dedicated
// thread, so a graceful stop can take locks and talk to peers (a signal
// handler could do neither). Call HandleStopSignals first thing in main,
// before any other thread starts, so every thread inherits the blocked mask.
#ifndef PSTRAIN_CORE_STOP_SIGNALS_H_
#define PSTRAIN_CORE_STOP_SIGNALS_H_

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>

#include "core/clock.h"
#include "core/mutex.h"

namespace pstrain {

// A one-way latch with a reason. Thread-safe.
class StopNotice {
 public:
  // The first reason wins; later calls are ignored.
  void Notify(const std::string& reason);
  // The same, for a stop signal: the reason names it, and signal() keeps it.
  void NotifySignal(int signo);
  bool requested() const;
  std::string reason() const;
  // The signal that stopped the task (SIGTERM, SIGINT), or 0 when the stop
  // came from elsewhere (the chief's shutdown) or has not come.
  int signal() const;
  // Blocks until notified; returns the reason.
  std::string Wait() const;
  // True when notified within `timeout` of `clock`'s time.
  bool WaitFor(Clock::Duration timeout, Clock* clock = Clock::Real()) const;

 private:
  // The first stop wins: its reason, and its signal (0: none).
  void Latch(const std::string& reason, int signo);

  mutable Mutex mu_;
  mutable std::condition_variable cv_;
  bool requested_ ABSL_GUARDED_BY(mu_) = false;
  std::string reason_ ABSL_GUARDED_BY(mu_);
  int signal_ ABSL_GUARDED_BY(mu_) = 0;
};

// Borrows notice for the life of the process.
void HandleStopSignals(StopNotice* notice);

}  // namespace pstrain

#endif  // PSTRAIN_CORE_STOP_SIGNALS_H_
