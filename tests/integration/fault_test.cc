// Crashes in the middle of training, as Kubernetes sees them: kill -9 a ps,
// a worker or the chief, then start it again with the same flags. Training
// must complete, global_step must never go back further than the last
// checkpoint, and the final accuracy must be within 1 point of an
// undisturbed run.
//
// The jobs train with synchronous replicas: an undisturbed sync run is
// repeatable to the bit, so what separates a disturbed run from the baseline
// is the crash and the recovery alone, not the order in which asynchronous
// updates happened to land.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <regex>
#include <thread>

#include "core/testing/wait_until.h"
#include "tests/integration/process_harness.h"

namespace pstrain {
namespace {

using testing::TestCluster;

// Each sync step averages one batch of 64 from each of the two workers: four
// whole jobs must fit ctest's 15 minutes on a slow 2-core machine.
constexpr int64_t kSteps = 400;
constexpr int64_t kDisturbAt = 150;

std::vector<std::string> Flags(const std::string& dir) {
  return {"--sync_replicas",
          "--learning_rate=0.02",
          "--batch_size=64",
          "--max_steps=" + std::to_string(kSteps),
          "--epochs=0",
          "--save_checkpoint_steps=50",
          "--save_checkpoint_secs=0",
          "--log_frequency=100",
          "--train_dir=" + dir,
          "--heartbeat_timeout_secs=5",
          "--save_summaries_steps=0",
          "--http_port=-1",
          "--retry_timeout_secs=120",
          "--ema_decay=0.99",
          "--eval_use_moving_averages"};
}

// Steps of the checkpoints the chief saved, in order.
std::vector<int64_t> SavedSteps(const std::string& chief_output) {
  std::vector<int64_t> steps;
  std::regex re(R"(saved checkpoint \S+model\.ckpt-(\d+))");
  for (std::sregex_iterator it(chief_output.begin(), chief_output.end(), re), end; it != end;
       ++it) {
    steps.push_back(std::stoll((*it)[1]));
  }
  return steps;
}

// Runs a whole job, with `disturb` called once global_step passes kDisturbAt.
double RunJob(const std::string& tag, const std::function<void(TestCluster&)>& disturb,
              std::string* chief_output) {
  testing::TempDir dir(tag);
  TestCluster cluster(dir.path(), 2, 2, Flags(dir.path()));
  cluster.StartAll();
  if (disturb) {
    EXPECT_TRUE(cluster.WaitForStep(kDisturbAt, std::chrono::seconds(300)))
        << cluster.Output("chief:0");
    disturb(cluster);
  }
  EXPECT_EQ(cluster.WaitForJobEnd(std::chrono::seconds(600)), "");
  *chief_output = cluster.Output("chief:0");
  return testing::FinalAccuracy(*chief_output);
}

// One test, so the undisturbed baseline runs once: each scenario kills one
// kind of task at step kDisturbAt of kSteps and starts it again.
TEST(FaultTest, KilledTasksRestartAndTrainingCompletesAsWell) {
  if (!testing::HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  std::string out;
  const double baseline = RunJob("fault_baseline", nullptr, &out);
  ASSERT_GT(baseline, 0.5) << "the undisturbed run did not train: " << out;

  // kill -9 a ps: every ps is restored from the last checkpoint.
  int64_t last_saved_before = -1;
  const double after_ps = RunJob(
      "fault_ps",
      [&](TestCluster& c) {
        const std::vector<int64_t> saved = SavedSteps(c.Output("chief:0"));
        ASSERT_FALSE(saved.empty());
        last_saved_before = saved.back();
        c.Kill9("ps:1");
        c.Start("ps:1");
      },
      &out);
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(out, m, std::regex(R"(restored every ps from \S+ \(global_step (\d+)\))")))
      << out;
  // global_step went back to the last checkpoint saved before the crash (or
  // one saved between the crash and the chief noticing it), never further.
  EXPECT_GE(std::stoll(m[1]), last_saved_before) << out;
  EXPECT_NE(out.find("restarted (new incarnation)"), std::string::npos) << out;
  EXPECT_NEAR(after_ps, baseline, 0.01) << out;

  // kill -9 a worker: declared dead, rejoins when restarted.
  const double after_worker = RunJob(
      "fault_worker",
      [](TestCluster& c) {
        c.Kill9("worker:1");
        // Started again once the chief has declared it dead (its heartbeat
        // timeout passed), so that it rejoins rather than carries on.
        WaitUntil(
            [&] { return c.Output("chief:0").find("worker:1 declared dead") != std::string::npos; },
            std::chrono::seconds(120), std::chrono::milliseconds(100));
        c.Start("worker:1");
      },
      &out);
  EXPECT_NE(out.find("worker:1 declared dead"), std::string::npos) << out;
  EXPECT_NE(out.find("worker:1 is back"), std::string::npos) << out;
  EXPECT_NEAR(after_worker, baseline, 0.01) << out;

  // kill -9 the chief: the restarted chief finds the model on the ps.
  const double after_chief = RunJob(
      "fault_chief",
      [](TestCluster& c) {
        c.Kill9("chief:0");
        c.Start("chief:0");
      },
      &out);
  EXPECT_NE(out.find("a restarted chief carries on"), std::string::npos) << out;
  EXPECT_NEAR(after_chief, baseline, 0.01) << out;

  std::printf(
      "final test accuracy after %lld steps: undisturbed %.4f, ps killed %.4f, "
      "worker killed %.4f, chief killed %.4f\n",
      static_cast<long long>(kSteps), baseline, after_ps, after_worker, after_chief);
}

// SIGTERM before the end is an eviction: every task stops gracefully (a
// worker without reporting done, the chief after saving a checkpoint, the ps
// tasks left running for it) and exits 143, retryable. Each, started again,
// carries on, and the job completes.
TEST(GracefulStop, SigtermedPsWorkerAndChiefExit143AndTheJobCompletes) {
  if (!testing::HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  testing::TempDir dir("sigterm");
  TestCluster cluster(dir.path(), 1, 2,
                      {"--max_steps=300", "--epochs=0", "--save_checkpoint_secs=0",
                       "--save_checkpoint_steps=50", "--log_frequency=50",
                       "--train_dir=" + dir.path(), "--http_port=-1", "--save_summaries_steps=0"});
  cluster.StartAll();
  ASSERT_TRUE(cluster.WaitForStep(100, std::chrono::seconds(300)));
  // The ps first: the chief restores it from a checkpoint once it is back.
  cluster.task("ps:0")->process()->Signal(SIGTERM);
  ASSERT_TRUE(cluster.WaitForExit("ps:0", std::chrono::seconds(60)));
  EXPECT_EQ(cluster.task("ps:0")->process()->exit_description(), "exit code 143")
      << cluster.Output("ps:0");
  cluster.Start("ps:0");
  ASSERT_TRUE(cluster.WaitForStep(150, std::chrono::seconds(300))) << cluster.Tails();
  EXPECT_NE(cluster.Output("chief:0").find("restored every ps from"), std::string::npos)
      << cluster.Output("chief:0");

  cluster.task("worker:1")->process()->Signal(SIGTERM);
  ASSERT_TRUE(cluster.WaitForExit("worker:1", std::chrono::seconds(60)));
  EXPECT_EQ(cluster.task("worker:1")->process()->exit_description(), "exit code 143")
      << cluster.Output("worker:1");
  EXPECT_NE(cluster.Output("worker:1").find("stopped before the job was done (signal Terminated)"),
            std::string::npos)
      << cluster.Output("worker:1");

  cluster.task("chief:0")->process()->Signal(SIGTERM);
  ASSERT_TRUE(cluster.WaitForExit("chief:0", std::chrono::seconds(60))) << cluster.Tails();
  EXPECT_EQ(cluster.task("chief:0")->process()->exit_description(), "exit code 143")
      << cluster.Output("chief:0");
  std::smatch m;
  const std::string chief = cluster.Output("chief:0");
  ASSERT_TRUE(std::regex_search(chief, m, std::regex(R"(saved checkpoint (\S+) \(graceful stop)")))
      << chief;
  EXPECT_TRUE(std::filesystem::exists(m[1].str() + ".index"));

  cluster.Start("chief:0");
  cluster.Start("worker:1");
  ASSERT_TRUE(cluster.WaitForExit("chief:0", std::chrono::seconds(300))) << cluster.Tails();
  EXPECT_TRUE(cluster.task("chief:0")->process()->succeeded()) << cluster.Output("chief:0");
  EXPECT_NE(cluster.Output("chief:0").find("a restarted chief carries on"), std::string::npos);
  EXPECT_NE(cluster.Output("chief:0").find("final: step 30"), std::string::npos)
      << cluster.Output("chief:0");
}

// A ps that stays gone is a lost peer: the worker gives up after
// --retry_timeout_secs with 138, retryable (its pod is recreated and waits
// for the ps again).
TEST(LostPeer, AWorkerWhosePsStaysGoneExits138) {
  if (!testing::HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  testing::TempDir dir("lost_peer");
  TestCluster cluster(dir.path(), 1, 1,
                      {"--max_steps=100000", "--epochs=0", "--save_checkpoint_secs=0",
                       "--log_frequency=10", "--train_dir=" + dir.path(), "--http_port=-1",
                       "--save_summaries_steps=0", "--retry_timeout_secs=3"});
  cluster.StartAll();
  ASSERT_TRUE(cluster.WaitForStep(20, std::chrono::seconds(300))) << cluster.Tails();
  cluster.Kill9("ps:0");
  ASSERT_TRUE(cluster.WaitForExit("worker:0", std::chrono::seconds(120))) << cluster.Tails();
  EXPECT_EQ(cluster.task("worker:0")->process()->exit_description(), "exit code 138")
      << cluster.Output("worker:0");
}

}  // namespace
}  // namespace pstrain
