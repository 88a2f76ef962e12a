#include "worker/backoff.h"

#include <algorithm>

namespace pstrain {

Backoff::Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds max,
                 std::chrono::seconds budget, Clock* clock)
    : initial_(initial), max_(max), budget_(budget), next_(initial), clock_(clock) {}

bool Backoff::Wait(const StopNotice* stop) {
  const Clock::TimePoint now = clock_->Now();
  if (!failing_) {
    failing_ = true;
    first_failure_ = now;
  }
  if (now - first_failure_ >= budget_) return false;
  const auto wait = next_;
  next_ = std::min(max_, next_ * 2);
  if (stop != nullptr) return !stop->WaitFor(wait, clock_);
  clock_->SleepFor(wait);
  return true;
}

void Backoff::Reset() {
  failing_ = false;
  next_ = initial_;
}

}  // namespace pstrain
