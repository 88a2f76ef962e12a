#include "chief/step_watch.h"

#include <algorithm>

namespace pstrain {

StepWatch::StepWatch(Clock* clock, Clock::Duration stall_after)
    : clock_(clock), stall_after_(stall_after) {
  Reset(0);
}

void StepWatch::Reset(int64_t step) {
  step_ = rate_step_ = step;
  last_change_ = last_report_ = rate_start_ = clock_->Now();
  steps_per_sec_ = 0;
}

bool StepWatch::Observe(int64_t step) {
  const Clock::TimePoint now = clock_->Now();
  const double window = std::chrono::duration<double>(now - rate_start_).count();
  if (now - rate_start_ >= kRateWindow) {
    steps_per_sec_ = std::max(0.0, (step - rate_step_) / window);
    rate_step_ = step;
    rate_start_ = now;
  }
  if (step != step_) {
    step_ = step;
    last_change_ = now;
    return false;
  }
  if (now - last_change_ < stall_after_ || now - last_report_ < stall_after_) return false;
  last_report_ = now;
  return true;
}

}  // namespace pstrain
