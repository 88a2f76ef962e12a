#include "core/clock.h"

namespace pstrain {
namespace {

class SteadyClock : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::steady_clock::now(); }
  bool WaitUntil(std::unique_lock<std::mutex>* lock, std::condition_variable* cv,
                 TimePoint deadline, const std::function<bool()>& done) override {
    return cv->wait_until(*lock, deadline, done);
  }
};

}  // namespace

void Clock::SleepFor(Duration d) {
  std::mutex mu;
  std::condition_variable cv;
  std::unique_lock<std::mutex> lock(mu);
  WaitFor(&lock, &cv, d, [] { return false; });
}

Clock* Clock::Real() {
  static SteadyClock* const clock = new SteadyClock;
  return clock;
}

}  // namespace pstrain
