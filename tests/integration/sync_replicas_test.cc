// Synchronous replicas with real processes on loopback: backup workers hide
// a straggler, a dead worker without backups no longer holds the step and
// counts again when it comes back, and a sync run repeats to the bit.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <regex>
#include <thread>

#include "ps/rpc/ps_client.h"
#include "tests/integration/process_harness.h"

namespace pstrain {
namespace {

using testing::BuildDir;
using testing::TestCluster;

std::string ReadBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

TEST(SyncReplicas, BackupWorkersHideAStraggler) {
  if (!testing::HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  testing::TempDir dir("sync_backup");
  // worker:2 sleeps 600 ms in every step; 2 of 3 gradients complete a step.
  TestCluster cluster(dir.path(), 2, 3,
                      {"--sync_replicas", "--replicas_to_aggregate=2", "--max_steps=40",
                       "--train_dir=" + dir.path(), "--log_frequency=10", "--http_port=-1",
                       "--save_summaries_steps=0"});
  cluster.StartAll();
  cluster.Kill9("worker:2");
  cluster.Start("worker:2", {"--test_only_step_delay_ms=600"});
  ASSERT_TRUE(cluster.WaitForExit("chief:0", std::chrono::seconds(300))) << cluster.Tails();
  ASSERT_TRUE(cluster.task("chief:0")->process()->succeeded()) << cluster.Output("chief:0");
  for (int w = 0; w < 3; ++w) {
    ASSERT_TRUE(cluster.WaitForExit("worker:" + std::to_string(w), std::chrono::seconds(60)));
  }
  std::smatch m;
  const std::string slow = cluster.Output("worker:2");
  ASSERT_TRUE(std::regex_search(
      slow, m,
      std::regex(
          R"(done after (\d+) local steps, global_step \d+, (\d+) stale gradients dropped)")))
      << slow;
  EXPECT_GT(std::stoi(m[2]), 0) << "the straggler's late gradients were dropped and counted";
  const int slow_steps = std::stoi(m[1]);
  // Had the steps gone at the straggler's pace, every worker would have taken
  // part in each of the 40. At the fast workers' pace the straggler manages
  // clearly fewer; how many fewer depends on how its 600 ms compare with a
  // step (a sanitized Debug build takes over a second per step), so compare
  // with the fast workers rather than with a fixed count.
  for (int w = 0; w < 2; ++w) {
    const std::string fast = cluster.Output("worker:" + std::to_string(w));
    ASSERT_TRUE(std::regex_search(fast, m, std::regex(R"(done after (\d+) local steps)"))) << fast;
    EXPECT_GE(std::stoi(m[1]), 30) << fast;
    EXPECT_LT(slow_steps + 5, std::stoi(m[1])) << slow << fast;
  }
  EXPECT_NE(cluster.Output("chief:0").find("each step averages 2 of 3"), std::string::npos);
}

// Without backups a dead worker would hold every step (TensorFlow's hang):
// once it is declared dead it no longer counts, the surviving worker
// completes the steps alone, and when the dead worker comes back (as
// Kubernetes restarts it) it counts again.
TEST(SyncReplicas, DeadWorkerWithoutBackupsNoLongerHoldsTheStep) {
  if (!testing::HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  testing::TempDir dir("sync_dead");
  TestCluster cluster(
      dir.path(), 1, 2,
      {"--sync_replicas", "--max_steps=200", "--epochs=0", "--batch_size=32",
       "--train_dir=" + dir.path(), "--step_timeout_secs=2", "--heartbeat_timeout_secs=5",
       "--log_frequency=10", "--http_port=-1", "--save_summaries_steps=0"});
  cluster.Start("ps:0");
  cluster.Start("chief:0");
  // A slow survivor, so that the run lasts until worker:1 is back: its
  // remaining steps take a minute and more, a new worker's start seconds.
  cluster.Start("worker:0", {"--test_only_step_delay_ms=150"});
  cluster.Start("worker:1");
  ASSERT_TRUE(cluster.WaitForStep(15, std::chrono::seconds(120))) << cluster.Tails();
  cluster.Kill9("worker:1");
  const std::string alone =
      "1 of 2 workers can still push (worker:0; finished: none; dead: worker:1): each step now "
      "averages the gradients of all 1 instead of 2";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (cluster.Output("chief:0").find(alone) == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    cluster.WaitForExit("chief:0", std::chrono::seconds(1));
  }
  ASSERT_NE(cluster.Output("chief:0").find(alone), std::string::npos) << cluster.Tails();
  EXPECT_NE(cluster.Output("chief:0").find("worker:1 declared dead"), std::string::npos);
  // The steps go on without worker:1.
  PsClient ps0(0, cluster.spec().Address("ps", 0));
  auto before = ps0.GetStatus(std::chrono::seconds(5));
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  ASSERT_TRUE(cluster.WaitForStep(before->global_step() + 5, std::chrono::seconds(60)))
      << cluster.Tails();

  cluster.Start("worker:1");  // as Kubernetes restarts it
  ASSERT_TRUE(cluster.WaitForExit("chief:0", std::chrono::seconds(300))) << cluster.Tails();
  const std::string chief = cluster.Output("chief:0");
  EXPECT_TRUE(cluster.task("chief:0")->process()->succeeded()) << chief;
  EXPECT_NE(chief.find("worker:1 is back"), std::string::npos) << chief;
  EXPECT_NE(chief.find("2 workers can push again (worker:0, worker:1): each step averages 2 "
                       "gradients"),
            std::string::npos)
      << chief;
  EXPECT_NE(chief.find("final: step 200"), std::string::npos) << chief;
}

TEST(SyncReplicas, RepeatedRunsAreBitIdentical) {
  if (!testing::HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  std::string data[2];
  for (int run = 0; run < 2; ++run) {
    testing::TempDir dir("sync_determinism_" + std::to_string(run));
    std::string out;
    const std::string result = testing::RunToCompletion(
        {BuildDir() + "/deploy/pstrain_local", "--ps=2", "--workers=2", "--sync_replicas",
         "--strict_sync", "--max_steps=25", "--seed=7", "--train_dir=" + dir.path(),
         "--http_port=-1", "--save_summaries_steps=0"},
        std::chrono::seconds(300), &out);
    ASSERT_EQ(result, "exit code 0") << out;
    data[run] = ReadBytes(dir.path() + "/model.ckpt-25.data-00000-of-00001");
    ASSERT_GT(data[run].size(), 13000000u);
  }
  EXPECT_TRUE(data[0] == data[1]) << "two sync runs with the same seeds differ";
}

// Async with --staleness=2: a fast worker may not run more than 2 steps
// ahead of a slow one, so both end with nearly the same number of steps;
// for a model of images and one of ids (its rows pulled and pushed by key).
class BoundedStaleness : public ::testing::TestWithParam<std::string> {};

TEST_P(BoundedStaleness, FastWorkerWaitsForTheSlowest) {
  if (!testing::HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  testing::TempDir dir("staleness");
  TestCluster cluster(dir.path(), 1, 2,
                      {"--model=" + GetParam(), "--staleness=2", "--max_steps=40", "--epochs=0",
                       "--train_dir=" + dir.path(), "--log_frequency=10", "--http_port=-1",
                       "--save_summaries_steps=0"});
  // The slow worker starts first: a worker that has never sent a heartbeat
  // holds nobody back, and a model of ids takes its 40 steps in a second.
  cluster.Start("ps:0");
  cluster.Start("chief:0");
  cluster.Start("worker:1", {"--test_only_step_delay_ms=300"});
  ASSERT_TRUE(cluster.WaitForPs0(
      [](const proto::StatusResponse& st) {
        for (const auto& w : st.workers()) {
          if (w.worker() == 1) return true;
        }
        return false;
      },
      std::chrono::seconds(60)))
      << cluster.Tails();
  cluster.Start("worker:0");
  ASSERT_TRUE(cluster.WaitForExit("chief:0", std::chrono::seconds(300))) << cluster.Tails();
  ASSERT_TRUE(cluster.task("chief:0")->process()->succeeded()) << cluster.Output("chief:0");
  int steps[2];
  for (int w = 0; w < 2; ++w) {
    ASSERT_TRUE(cluster.WaitForExit("worker:" + std::to_string(w), std::chrono::seconds(60)));
    const std::string out = cluster.Output("worker:" + std::to_string(w));
    std::smatch m;
    ASSERT_TRUE(std::regex_search(out, m, std::regex(R"(done after (\d+) local steps)"))) << out;
    steps[w] = std::stoi(m[1]);
  }
  // Unbounded, the fast worker would take most of the 40 steps (the slow
  // one sleeps 300 ms a step); bounded, the two stay within 2 (+1 for the
  // step in flight when global_step reached 40).
  EXPECT_LE(steps[0] - steps[1], 3) << steps[0] << " vs " << steps[1];
}

INSTANTIATE_TEST_SUITE_P(ImagesAndIds, BoundedStaleness, ::testing::Values("mnist", "mnist_ids"));

}  // namespace
}  // namespace pstrain
