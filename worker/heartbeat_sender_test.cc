// HeartbeatSender against a ps in this process (ps/testing/in_process_ps.h).
#include "worker/heartbeat_sender.h"

#include <gtest/gtest.h>

#include <optional>
#include "core/testing/fake_clock.h"
#include "core/testing/status_assertions.h"
#include "ps/testing/in_process_ps.h"

namespace pstrain {
namespace {

class HeartbeatSenderTest : public ::testing::Test {
 protected:
  // What ps:0 knows of worker 3, or nullopt when it has not heard of it.
  std::optional<proto::WorkerState> Worker3() {
    auto st = ps_.GetStatus(std::chrono::seconds(5));
    EXPECT_TRUE(st.ok()) << st.status().ToString();
    if (!st.ok()) return std::nullopt;
    for (const auto& w : st->workers()) {
      if (w.worker() == 3) return w;
    }
    return std::nullopt;
  }

  InProcessPs ps_{0};
  FakeClock clock_;
};

TEST_F(HeartbeatSenderTest, SendsTheLatestStepAndLossEveryInterval) {
  HeartbeatSender sender(&ps_, 3, std::chrono::seconds(1), &clock_);
  // The first heartbeat goes at once; then the sender waits an interval.
  ASSERT_TRUE(clock_.AwaitSleepers(1));
  ASSERT_TRUE(Worker3().has_value());
  sender.set_local_step(7);
  sender.set_loss(1.5f);
  clock_.Advance(std::chrono::milliseconds(999));
  ASSERT_TRUE(clock_.AwaitSleepers(1));
  EXPECT_EQ(Worker3()->local_step(), 0) << "a heartbeat before its interval was over";
  clock_.Advance(std::chrono::milliseconds(1));
  ASSERT_TRUE(clock_.AwaitSleepers(1));
  std::optional<proto::WorkerState> w = Worker3();
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->local_step(), 7);
  EXPECT_FLOAT_EQ(w->loss(), 1.5f);
  EXPECT_FALSE(w->done());
}

// The race that once hung a sync job: the worker reported done while its
// heartbeat thread still ran, a heartbeat landed after WorkerDone, and the
// chief went on waiting for a worker that had exited.
TEST_F(HeartbeatSenderTest, NoHeartbeatUndoesWorkerDoneAfterStop) {
  HeartbeatSender sender(&ps_, 3, std::chrono::seconds(1), &clock_);
  sender.set_local_step(40);
  ASSERT_TRUE(clock_.AwaitSleepers(1));
  sender.Stop();
  sender.Stop();  // idempotent
  // Its thread is gone, not waiting for the next interval.
  EXPECT_EQ(clock_.sleepers(), 0);
  PS_ASSERT_OK(ps_.WorkerDone(3, ""));
  clock_.Advance(std::chrono::seconds(200));
  auto w = Worker3();
  ASSERT_TRUE(w.has_value());
  EXPECT_TRUE(w->done());
}

}  // namespace
}  // namespace pstrain
