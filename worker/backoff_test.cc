#include "worker/backoff.h"

#include <gtest/gtest.h>

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

TEST(Backoff, StopEndsTheWait) {
  StopNotice stop;
  stop.Notify("test");
  Backoff b(std::chrono::seconds(10), std::chrono::seconds(10), std::chrono::seconds(60));
  EXPECT_FALSE(b.Wait(&stop));
}

TEST(Backoff, RetryableCodes) {
  EXPECT_TRUE(IsRetryable(Unavailable("ps down")));
  EXPECT_TRUE(IsRetryable(Aborted("restored")));
  EXPECT_FALSE(IsRetryable(InvalidArgument("bad")));
  EXPECT_FALSE(IsRetryable(FailedPrecondition("placement")));
}

}  // namespace
}  // namespace pstrain
