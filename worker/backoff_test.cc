#include "worker/backoff.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "core/testing/fake_clock.h"

namespace pstrain {
namespace {

TEST(Backoff, DoublesUpToTheMaxAndGivesUpAfterTheBudget) {
  Backoff b(std::chrono::milliseconds(1), std::chrono::milliseconds(4), std::chrono::seconds(0));
  EXPECT_FALSE(b.Wait(nullptr));  // no budget at all

  Backoff c(std::chrono::milliseconds(1), std::chrono::milliseconds(4), std::chrono::seconds(60));
  EXPECT_EQ(c.next_wait().count(), 1);
  EXPECT_TRUE(c.Wait(nullptr));
  EXPECT_EQ(c.next_wait().count(), 2);
  EXPECT_TRUE(c.Wait(nullptr));
  EXPECT_TRUE(c.Wait(nullptr));
  EXPECT_EQ(c.next_wait().count(), 4);
  c.Reset();
  EXPECT_EQ(c.next_wait().count(), 1);
}

// On a clock the test moves: each wait lasts exactly its time, and the
// first Wait after the budget has passed gives up without waiting.
TEST(Backoff, WaitsDoublingTimesOnItsClockUntilTheBudgetIsSpent) {
  using std::chrono::seconds;
  FakeClock clock;
  Backoff b(seconds(1), seconds(4), seconds(6), &clock);
  std::vector<Clock::Duration> waited;
  bool gave_up = false;
  std::thread retrier([&] {
    for (;;) {
      const Clock::TimePoint start = clock.Now();
      if (!b.Wait(nullptr)) break;
      waited.push_back(clock.Now() - start);
    }
    gave_up = true;
  });
  for (seconds step : {seconds(1), seconds(2), seconds(4)}) {
    ASSERT_TRUE(clock.AwaitSleepers(1));
    clock.Advance(step);
  }
  retrier.join();  // 7 s spent of a 6 s budget
  EXPECT_TRUE(gave_up);
  EXPECT_EQ(waited, (std::vector<Clock::Duration>{seconds(1), seconds(2), seconds(4)}));
}

TEST(Backoff, StopEndsTheWait) {
  StopNotice stop;
  stop.Notify("test");
  Backoff b(std::chrono::seconds(10), std::chrono::seconds(10), std::chrono::seconds(60));
  EXPECT_FALSE(b.Wait(&stop));
}

}  // namespace
}  // namespace pstrain
