#include "ps/worker_registry.h"

#include <gtest/gtest.h>

#include "core/testing/fake_clock.h"

namespace pstrain {
namespace {

TEST(WorkerRegistry, SlowestLiveWorkerIgnoresSilentAndDoneWorkers) {
  FakeClock clock;
  WorkerRegistry reg(&clock);
  EXPECT_EQ(reg.MinLiveLocalStep(std::chrono::seconds(10)), -1);
  reg.Heartbeat(0, 50);
  reg.Heartbeat(1, 20);
  reg.Heartbeat(2, 35);
  EXPECT_EQ(reg.MinLiveLocalStep(std::chrono::seconds(10)), 20);

  clock.Advance(std::chrono::seconds(8));
  reg.Heartbeat(0, 60);
  reg.Heartbeat(2, 40);
  clock.Advance(std::chrono::seconds(3));  // worker 1 silent for 11 s: dead
  EXPECT_EQ(reg.MinLiveLocalStep(std::chrono::seconds(10)), 40);

  reg.MarkDone(2, "");
  EXPECT_EQ(reg.MinLiveLocalStep(std::chrono::seconds(10)), 60);

  auto snap = reg.Snapshot();
  ASSERT_EQ(snap.size(), 3u);
  EXPECT_EQ(snap[1].worker, 1);
  EXPECT_DOUBLE_EQ(snap[1].seconds_since_heartbeat, 11.0);
  EXPECT_TRUE(snap[2].done);

  reg.Heartbeat(1, 21);  // worker 1 comes back
  EXPECT_EQ(reg.MinLiveLocalStep(std::chrono::seconds(10)), 21);
}

// A worker's failure stays with it until it heartbeats again, as a
// restarted worker does.
TEST(WorkerRegistry, AFailureIsKeptUntilTheWorkerComesBack) {
  FakeClock clock;
  WorkerRegistry reg(&clock);
  reg.Heartbeat(0, 5);
  reg.MarkDone(0, "another placement");
  auto snap = reg.Snapshot();
  ASSERT_EQ(snap.size(), 1u);
  EXPECT_TRUE(snap[0].done);
  EXPECT_EQ(snap[0].failure, "another placement");
  reg.Heartbeat(0, 6);
  snap = reg.Snapshot();
  EXPECT_FALSE(snap[0].done);
  EXPECT_EQ(snap[0].failure, "");
}

}  // namespace
}  // namespace pstrain
