// Backoff: how a worker waits out a lost ps (restarting, being restored by
// the chief): exponential waits from `initial` up to `max`, giving up once
// `budget` has passed since the last success.
//
// Thread-compatible.
#ifndef PSTRAIN_WORKER_BACKOFF_H_
#define PSTRAIN_WORKER_BACKOFF_H_

#include <chrono>

#include "core/clock.h"
#include "core/status.h"
#include "core/stop_signals.h"

namespace pstrain {

class Backoff {
 public:
  // Measures and waits on `clock`'s time.
  Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds max,
          std::chrono::seconds budget, Clock* clock = Clock::Real());
  // Sleeps the next wait. False (without sleeping) once the budget is spent
  // or when `stop` is notified.
  bool Wait(const StopNotice* stop);
  // A success: the next failure starts from `initial` with a full budget.
  void Reset();
  std::chrono::milliseconds next_wait() const { return next_; }

 private:
  const std::chrono::milliseconds initial_, max_;
  const std::chrono::seconds budget_;
  std::chrono::milliseconds next_;
  Clock* const clock_;
  bool failing_ = false;
  Clock::TimePoint first_failure_;
};

}  // namespace pstrain

#endif  // PSTRAIN_WORKER_BACKOFF_H_
