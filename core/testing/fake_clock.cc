#include "core/testing/fake_clock.h"

namespace pstrain {

bool FakeClock::WaitUntil(std::unique_lock<std::mutex>* lock, std::condition_variable* cv,
                          TimePoint deadline, const std::function<bool()>& done) {
  if (done()) return true;
  if (Now() >= deadline) return false;
  // Registered before the first look at the time, so that no Advance can
  // slip between that look and the wait unnoticed (Advance takes our mutex
  // before it notifies).
  lock->unlock();
  std::list<Waiter>::iterator me;
  {
    MutexLock guard(&mu_);
    me = waiters_.insert(waiters_.end(), Waiter{lock->mutex(), cv, deadline});
  }
  waiters_changed_.notify_all();
  lock->lock();
  while (!done() && Now() < deadline) cv->wait(*lock);
  lock->unlock();
  {
    MutexLock guard(&mu_);
    waiters_.erase(me);
  }
  waiters_changed_.notify_all();
  lock->lock();
  return done();
}

void FakeClock::Advance(Duration d) {
  MutexLock guard(&mu_);
  now_.store(now_.load() + d);
  for (const Waiter& w : waiters_) {
    if (w.deadline > Now()) continue;
    // Taking the waiter's mutex: it is either about to look at the time
    // (and sees the new one) or inside wait (and gets the notify).
    { std::lock_guard<std::mutex> waiter(*w.mu); }
    w.cv->notify_all();
  }
}

int FakeClock::SleepersLocked() const {
  int n = 0;
  for (const Waiter& w : waiters_) n += w.deadline > Now() ? 1 : 0;
  return n;
}

int FakeClock::sleepers() const {
  MutexLock guard(&mu_);
  return SleepersLocked();
}

bool FakeClock::AwaitSleepers(int n, std::chrono::seconds limit) {
  MutexLock lock(&mu_);
  return waiters_changed_.wait_for(*lock.native(), limit, [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return SleepersLocked() >= n;
  });
}

}  // namespace pstrain
