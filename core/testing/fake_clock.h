// FakeClock: a Clock (core/clock.h) that moves only when a test advances
// it. A thread waiting on it for a time to come blocks until Advance brings
// that time (or its condition comes true); AwaitSleepers lets a test wait,
// without sleeping, until the threads under test have done everything they
// can do before time passes.
//
// Thread-safe.
#ifndef PSTRAIN_CORE_TESTING_FAKE_CLOCK_H_
#define PSTRAIN_CORE_TESTING_FAKE_CLOCK_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <list>
#include <mutex>

#include "core/clock.h"
#include "core/mutex.h"

namespace pstrain {

class FakeClock : public Clock {
 public:
  TimePoint Now() const override { return TimePoint(now_.load()); }
  bool WaitUntil(std::unique_lock<std::mutex>* lock, std::condition_variable* cv,
                 TimePoint deadline, const std::function<bool()>& done) override;

  // Moves time forward by `d`, waking every waiter whose deadline it
  // reaches.
  void Advance(Duration d);
  // Blocks until at least `n` threads wait on this clock for a time still
  // to come; false when that has not happened within `limit` of real time
  // (a thread under test that never waits again).
  bool AwaitSleepers(int n, std::chrono::seconds limit = std::chrono::seconds(30));
  // Threads waiting on this clock for a time still to come.
  int sleepers() const;

 private:
  struct Waiter {
    std::mutex* mu;
    std::condition_variable* cv;
    TimePoint deadline;
  };

  int SleepersLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Lock order: mu_, then a waiter's mutex (Advance). A waiter never takes
  // mu_ while it holds its own.
  std::atomic<Duration> now_{std::chrono::hours(1)};
  mutable Mutex mu_;
  std::condition_variable waiters_changed_;
  std::list<Waiter> waiters_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pstrain

#endif  // PSTRAIN_CORE_TESTING_FAKE_CLOCK_H_
