// StepWatch: global_step as the chief sees it, poll after poll: how fast it
// moves (steps per second over windows of at least kRateWindow), and whether
// it has stood still for `stall_after` (a sync step waiting for gradients
// that do not come), reported at most once per stall_after.
//
// Thread-compatible.
#ifndef PSTRAIN_CHIEF_STEP_WATCH_H_
#define PSTRAIN_CHIEF_STEP_WATCH_H_

#include <chrono>
#include <cstdint>

#include "core/clock.h"

namespace pstrain {

class StepWatch {
 public:
  // The shortest window the rate is measured over: shorter ones make it
  // jump with every poll.
  static constexpr std::chrono::seconds kRateWindow{2};

  StepWatch(Clock* clock, Clock::Duration stall_after);

  // Starts watching at `step`, now.
  void Reset(int64_t step);
  // One poll's global_step. True when the step has not moved for
  // stall_after, and the last such report is as old: time to say why.
  bool Observe(int64_t step);

  double steps_per_sec() const { return steps_per_sec_; }
  // How long the step has stood still.
  Clock::Duration still_for() const { return clock_->Now() - last_change_; }

 private:
  Clock* const clock_;
  const Clock::Duration stall_after_;
  int64_t step_ = -1;
  Clock::TimePoint last_change_;
  Clock::TimePoint last_report_;
  int64_t rate_step_ = 0;
  Clock::TimePoint rate_start_;
  double steps_per_sec_ = 0;
};

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_STEP_WATCH_H_
