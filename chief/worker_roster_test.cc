#include "chief/worker_roster.h"

#include <gtest/gtest.h>

namespace pstrain {
namespace {

using State = WorkerRoster::State;

// ps:0's view: (worker, seconds since its heartbeat, done).
proto::StatusResponse View(std::initializer_list<std::tuple<int, double, bool>> workers) {
  proto::StatusResponse st;
  for (const auto& [w, secs, done] : workers) {
    proto::WorkerState* ws = st.add_workers();
    ws->set_worker(w);
    ws->set_seconds_since_heartbeat(secs);
    ws->set_done(done);
  }
  return st;
}

TEST(WorkerRoster, WorkersNotHeardFromYetCanStillPush) {
  WorkerRoster roster(3, 10);
  roster.Update(View({{1, 0.5, false}}));
  EXPECT_EQ(roster.InState(State::kLive), (std::vector<int>{0, 1, 2}));
  EXPECT_FALSE(roster.JobOver());
}

TEST(WorkerRoster, NamesTheWorkersNeverHeardFrom) {
  WorkerRoster roster(3, 10);
  roster.Update(View({{1, 0.5, false}}));
  EXPECT_EQ(roster.NeverHeardFrom(), (std::vector<int>{0, 2}));
  roster.Update(View({{0, 0.5, false}}));  // ps:0's record holds every worker seen
  EXPECT_EQ(roster.NeverHeardFrom(), (std::vector<int>{2}));
}

TEST(WorkerRoster, KeepsTheFirstFailureAWorkerReported) {
  WorkerRoster roster(2, 10);
  proto::StatusResponse st = View({{0, 0, true}, {1, 0, true}});
  st.mutable_workers(1)->set_failure("model mnist_bn: another placement");
  roster.Update(st);
  EXPECT_EQ(roster.failure(), "worker:1 failed: model mnist_bn: another placement");
  EXPECT_EQ(roster.state(1), State::kDone);
}

TEST(WorkerRoster, SilentWorkerIsDeadUntilItsNextHeartbeat) {
  WorkerRoster roster(2, 10);
  roster.Update(View({{0, 1, false}, {1, 10.5, false}}));
  EXPECT_EQ(roster.state(1), State::kDead);
  EXPECT_EQ(roster.InState(State::kLive), (std::vector<int>{0}));
  roster.Update(View({{0, 1, false}, {1, 0.2, false}}));
  EXPECT_EQ(roster.state(1), State::kLive);
}

TEST(WorkerRoster, JobIsOverWhenNoWorkerCanPushAndOneFinished) {
  WorkerRoster roster(3, 10);
  roster.Update(View({{0, 0, true}, {1, 1, false}, {2, 0, true}}));
  EXPECT_FALSE(roster.JobOver()) << "worker:1 can still push";
  roster.Update(View({{0, 60, true}, {1, 30, false}, {2, 60, true}}));
  EXPECT_EQ(roster.state(0), State::kDone) << "a finished worker is never dead";
  EXPECT_EQ(roster.state(1), State::kDead);
  EXPECT_TRUE(roster.JobOver());
}

TEST(WorkerRoster, EveryWorkerDeadAndNoneFinishedWaits) {
  WorkerRoster roster(2, 10);
  roster.Update(View({{0, 20, false}, {1, 20, false}}));
  EXPECT_TRUE(roster.InState(State::kLive).empty());
  EXPECT_FALSE(roster.JobOver()) << "restarted workers rejoin";
}

TEST(WorkerRoster, IgnoresWorkersOutsideTheSpec) {
  WorkerRoster roster(1, 10);
  roster.Update(View({{5, 0, true}, {-1, 0, true}}));
  EXPECT_EQ(roster.InState(State::kLive), (std::vector<int>{0}));
  EXPECT_FALSE(roster.JobOver());
}

TEST(WorkerList, NamesWorkers) {
  EXPECT_EQ(WorkerList({}), "none");
  EXPECT_EQ(WorkerList({0, 2}), "worker:0, worker:2");
}

}  // namespace
}  // namespace pstrain
