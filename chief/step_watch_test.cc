// StepWatch on a clock the test moves: the rate over windows of at least
// two seconds, and a stall reported once per stall_after, never while the
// step moves.
#include "chief/step_watch.h"

#include <gtest/gtest.h>

#include "core/testing/fake_clock.h"

namespace pstrain {
namespace {

using std::chrono::seconds;

TEST(StepWatch, MeasuresTheRateOverWindowsOfAtLeastTwoSeconds) {
  FakeClock clock;
  StepWatch watch(&clock, seconds(30));
  watch.Reset(100);
  clock.Advance(seconds(1));
  watch.Observe(150);
  EXPECT_EQ(watch.steps_per_sec(), 0.0) << "measured over a window under 2 s";
  clock.Advance(seconds(3));
  watch.Observe(300);  // 200 steps in 4 s
  EXPECT_DOUBLE_EQ(watch.steps_per_sec(), 50.0);
  clock.Advance(seconds(2));
  watch.Observe(300);
  EXPECT_DOUBLE_EQ(watch.steps_per_sec(), 0.0);
}

TEST(StepWatch, ReportsAStallOncePerStallAfterAndNeverWhileTheStepMoves) {
  FakeClock clock;
  StepWatch watch(&clock, seconds(30));
  watch.Reset(7);
  for (int i = 0; i < 10; ++i) {  // 50 s, a step every 5 s
    clock.Advance(seconds(5));
    EXPECT_FALSE(watch.Observe(8 + i));
  }
  clock.Advance(seconds(29));
  EXPECT_FALSE(watch.Observe(17));
  clock.Advance(seconds(1));
  EXPECT_TRUE(watch.Observe(17));  // still for 30 s
  EXPECT_EQ(watch.still_for(), seconds(30));
  clock.Advance(seconds(10));
  EXPECT_FALSE(watch.Observe(17)) << "reported again within 30 s of the last report";
  clock.Advance(seconds(20));
  EXPECT_TRUE(watch.Observe(17));
  clock.Advance(seconds(1));
  EXPECT_FALSE(watch.Observe(18));
  EXPECT_EQ(watch.still_for(), seconds(0));
}

}  // namespace
}  // namespace pstrain
