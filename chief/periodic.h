// Periodic: something the chief does every `period` of its clock's time (the
// checkpoint timer, evaluation while training, the progress line): due once
// the period has passed since it was last done, or since it was made.
//
// Thread-compatible.
#ifndef PSTRAIN_CHIEF_PERIODIC_H_
#define PSTRAIN_CHIEF_PERIODIC_H_

#include "core/clock.h"

namespace pstrain {

class Periodic {
 public:
  // A period of zero or less is never due.
  Periodic(Clock* clock, Clock::Duration period)
      : clock_(clock), period_(period), last_(clock->Now()) {}

  bool Due() const { return period_ > Clock::Duration::zero() && since() >= period_; }
  void Done() { last_ = clock_->Now(); }
  // Time since it was last done.
  Clock::Duration since() const { return clock_->Now() - last_; }

 private:
  Clock* const clock_;
  const Clock::Duration period_;
  Clock::TimePoint last_;
};

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_PERIODIC_H_
