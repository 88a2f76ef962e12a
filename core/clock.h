// Clock: the time a component measures and waits on, injected so that tests
// control it (core/testing/fake_clock.h) instead of sleeping. Everything
// that keeps time points or waits for a duration (the supervisor, the
// worker's backoff and heartbeats, the ps's worker registry, sync step
// deadlines) takes a Clock*, the process's steady clock by default.
//
// Thread-safe.
#ifndef PSTRAIN_CORE_CLOCK_H_
#define PSTRAIN_CORE_CLOCK_H_

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>

namespace pstrain {

class Clock {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  using Duration = std::chrono::steady_clock::duration;

  virtual ~Clock() = default;

  virtual TimePoint Now() const = 0;
  // Waits on `cv`, whose mutex `lock` holds, until `done()` holds or this
  // clock reaches `deadline`; returns done(). `done` is called with the
  // lock held, and whoever makes it true notifies `cv`.
  virtual bool WaitUntil(std::unique_lock<std::mutex>* lock, std::condition_variable* cv,
                         TimePoint deadline, const std::function<bool()>& done) = 0;

  bool WaitFor(std::unique_lock<std::mutex>* lock, std::condition_variable* cv, Duration timeout,
               const std::function<bool()>& done) {
    return WaitUntil(lock, cv, Now() + timeout, done);
  }
  // Waits `d` of this clock's time.
  void SleepFor(Duration d);

  // The process's steady clock.
  static Clock* Real();
};

}  // namespace pstrain

#endif  // PSTRAIN_CORE_CLOCK_H_
