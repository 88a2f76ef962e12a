// FakeClock: waits end when time is advanced to their deadline, or when
// their condition comes true, and never before.
#include "core/testing/fake_clock.h"

#include <gtest/gtest.h>

#include <thread>

namespace pstrain {
namespace {

using std::chrono::seconds;

TEST(FakeClock, AWaitEndsWhenTimeReachesItsDeadline) {
  FakeClock clock;
  std::mutex mu;
  std::condition_variable cv;
  std::atomic<int> ended{0};
  bool result = true;
  std::thread waiter([&] {
    std::unique_lock<std::mutex> lock(mu);
    result = clock.WaitFor(&lock, &cv, seconds(10), [] { return false; });
    ended = 1;
  });
  ASSERT_TRUE(clock.AwaitSleepers(1));
  clock.Advance(seconds(9));
  // Still asleep: its deadline is a second away.
  ASSERT_TRUE(clock.AwaitSleepers(1));
  EXPECT_EQ(ended.load(), 0);
  clock.Advance(seconds(1));
  waiter.join();
  EXPECT_EQ(ended.load(), 1);
  EXPECT_FALSE(result);
  EXPECT_EQ(clock.sleepers(), 0);
}

TEST(FakeClock, AWaitEndsWhenItsConditionComesTrue) {
  FakeClock clock;
  std::mutex mu;
  std::condition_variable cv;
  bool ready = false;
  bool result = false;
  std::thread waiter([&] {
    std::unique_lock<std::mutex> lock(mu);
    result = clock.WaitFor(&lock, &cv, seconds(10), [&] { return ready; });
  });
  ASSERT_TRUE(clock.AwaitSleepers(1));
  {
    std::lock_guard<std::mutex> lock(mu);
    ready = true;
  }
  cv.notify_all();
  waiter.join();
  EXPECT_TRUE(result);
}

TEST(FakeClock, SleepForLastsExactlyItsDuration) {
  FakeClock clock;
  const Clock::TimePoint start = clock.Now();
  std::thread sleeper([&] { clock.SleepFor(seconds(3)); });
  ASSERT_TRUE(clock.AwaitSleepers(1));
  clock.Advance(seconds(2));
  ASSERT_TRUE(clock.AwaitSleepers(1));
  clock.Advance(seconds(1));
  sleeper.join();
  EXPECT_EQ(clock.Now() - start, seconds(3));
}

TEST(FakeClock, AWaitWhoseDeadlineHasPassedDoesNotBlock) {
  FakeClock clock;
  std::mutex mu;
  std::condition_variable cv;
  std::unique_lock<std::mutex> lock(mu);
  EXPECT_FALSE(clock.WaitUntil(&lock, &cv, clock.Now(), [] { return false; }));
  EXPECT_FALSE(clock.AwaitSleepers(1, seconds(0)));
}

}  // namespace
}  // namespace pstrain
