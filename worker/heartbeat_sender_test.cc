// HeartbeatSender against a ps in this process (ps/testing/in_process_ps.h).
#include "worker/heartbeat_sender.h"

#include <gtest/gtest.h>

#include <optional>
#include <thread>

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
};

TEST_F(HeartbeatSenderTest, SendsTheLatestStepAndLossEveryInterval) {
  HeartbeatSender sender(&ps_, 3, std::chrono::milliseconds(5));
  sender.set_local_step(7);
  sender.set_loss(1.5f);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::optional<proto::WorkerState> w;
  while (std::chrono::steady_clock::now() < deadline) {
    w = Worker3();
    if (w && w->local_step() == 7) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->local_step(), 7);
  EXPECT_FLOAT_EQ(w->loss(), 1.5f);
  EXPECT_FALSE(w->done());
}

// The race that once hung a sync job: the worker reported done while its
// heartbeat thread still ran, a heartbeat landed after WorkerDone, and the
// chief went on waiting for a worker that had exited.
TEST_F(HeartbeatSenderTest, NoHeartbeatUndoesWorkerDoneAfterStop) {
  HeartbeatSender sender(&ps_, 3, std::chrono::milliseconds(1));
  sender.set_local_step(40);
  while (!Worker3()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  sender.Stop();
  sender.Stop();  // idempotent
  ASSERT_TRUE(ps_.WorkerDone(3).ok());
  // Two hundred intervals: without Stop a heartbeat would have reset done.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto w = Worker3();
  ASSERT_TRUE(w.has_value());
  EXPECT_TRUE(w->done());
}

}  // namespace
}  // namespace pstrain
