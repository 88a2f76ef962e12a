// Synchronous training that ends (real processes on loopback): a worker that
// has finished, like one declared dead, no longer counts towards a step, so
// the workers that remain complete the steps alone, and when none remain
// the job ends with every process exiting 0. TensorFlow's
// SyncReplicasOptimizer hangs here for ever.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "tests/integration/process_harness.h"

namespace pstrain {
namespace {

using testing::TestCluster;

// Flags every task of these tests gets: small shards so that each run takes
// seconds, and a short heartbeat timeout so that a killed worker is declared
// dead soon.
std::vector<std::string> CommonFlags(const std::string& train_dir, std::vector<std::string> more) {
  std::vector<std::string> flags = {"--sync_replicas",          "--batch_size=32",
                                    "--train_dir=" + train_dir, "--http_port=-1",
                                    "--save_summaries_steps=0", "--heartbeat_timeout_secs=5",
                                    "--log_frequency=10",       "--learning_rate=0.02"};
  flags.insert(flags.end(), more.begin(), more.end());
  return flags;
}

// Starts the ps tasks and the chief; the test starts each worker itself.
void StartPsAndChief(TestCluster* cluster) {
  for (int i = 0; i < cluster->spec().NumTasks("ps"); ++i) {
    cluster->Start("ps:" + std::to_string(i));
  }
  cluster->Start("chief:0");
}

// The chief ends by itself; then every task named has exited 0.
void ExpectEndsCleanly(TestCluster* cluster, const std::vector<std::string>& tasks) {
  ASSERT_TRUE(cluster->WaitForExit("chief:0", std::chrono::seconds(240))) << cluster->Tails();
  EXPECT_TRUE(cluster->task("chief:0")->process()->succeeded()) << cluster->Output("chief:0");
  EXPECT_TRUE(std::regex_search(cluster->Output("chief:0"),
                                std::regex(R"(final: step \d+, test accuracy 0\.\d{4})")))
      << cluster->Output("chief:0");
  for (const std::string& t : tasks) {
    ASSERT_TRUE(cluster->WaitForExit(t, std::chrono::seconds(60))) << t << cluster->Tails();
    EXPECT_TRUE(cluster->task(t)->process()->succeeded())
        << t << ": " << cluster->task(t)->process()->exit_description() << "\n"
        << cluster->Output(t);
  }
}

// The issue's scenario, scaled down: 2 ps, 3 workers, 2 of 3 gradients per
// step (one backup), each worker 2 epochs of its shard. worker:1 is slower,
// so workers 0 and 2 finish first and worker:1 must complete its last steps
// alone. Strict mode (distinct workers per step) alike.
class SyncEndsWithBackups : public ::testing::TestWithParam<bool> {};

TEST_P(SyncEndsWithBackups, WhenWorkersFinishAtDifferentTimes) {
  if (!testing::HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const bool strict = GetParam();
  testing::TempDir dir(strict ? "sync_end_strict" : "sync_end");
  std::vector<std::string> more = {"--replicas_to_aggregate=2", "--total_num_replicas=3",
                                   "--train_examples=3000", "--epochs=2"};
  if (strict) more.push_back("--strict_sync");
  TestCluster cluster(dir.path(), 2, 3, CommonFlags(dir.path(), more));
  StartPsAndChief(&cluster);
  cluster.Start("worker:0");
  cluster.Start("worker:1", {"--test_only_step_delay_ms=60"});
  cluster.Start("worker:2");
  ExpectEndsCleanly(&cluster, {"worker:0", "worker:1", "worker:2", "ps:0", "ps:1"});
  const std::string chief = cluster.Output("chief:0");
  // The last worker left completes the steps alone, logged once: worker:1
  // as a rule, but a busy machine may start the three far apart.
  const std::regex alone(
      R"(1 of 3 workers can still push \(worker:\d; finished: worker:\d, worker:\d; dead: )"
      R"(none\): each step now averages the gradients of all 1 instead of 2)");
  EXPECT_EQ(std::distance(std::sregex_iterator(chief.begin(), chief.end(), alone),
                          std::sregex_iterator()),
            1)
      << "logged once\n"
      << chief;
  for (int w = 0; w < 3; ++w) {
    EXPECT_NE(cluster.Output("worker:" + std::to_string(w)).find("done after 64 local steps"),
              std::string::npos)
        << "every worker read its whole shard twice (1000 examples: 32 batches)\n"
        << cluster.Output("worker:" + std::to_string(w));
  }
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/checkpoint"));
}

INSTANTIATE_TEST_SUITE_P(Backups, SyncEndsWithBackups, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Strict" : "NotStrict"; });

// No backups (2 of 2), shards of unequal size: worker:0 trains on 300
// examples, worker:1 on 1500; once worker:0 is done, worker:1 goes on alone.
TEST(SyncEnds, WithShardsOfUnequalSize) {
  if (!testing::HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  testing::TempDir dir("sync_end_unequal");
  TestCluster cluster(dir.path(), 1, 2, CommonFlags(dir.path(), {"--epochs=1"}));
  StartPsAndChief(&cluster);
  cluster.Start("worker:0", {"--train_examples=600"});
  cluster.Start("worker:1", {"--train_examples=3000"});
  ExpectEndsCleanly(&cluster, {"worker:0", "worker:1", "ps:0"});
  EXPECT_NE(cluster.Output("worker:0").find("done after 10 local steps"), std::string::npos)
      << cluster.Output("worker:0");
  EXPECT_NE(cluster.Output("worker:1").find("done after 47 local steps"), std::string::npos)
      << cluster.Output("worker:1");
  EXPECT_NE(cluster.Output("chief:0").find("1 of 2 workers can still push (worker:1; "
                                           "finished: worker:0; dead: none)"),
            std::string::npos)
      << cluster.Output("chief:0");
}

// worker:2 is killed and declared dead; worker:0 then finishes; worker:1
// completes the steps alone and finishes; nobody is left who can push, so
// the job ends without waiting for the dead worker.
TEST(SyncEnds, WhenAWorkerFinishesWhileAnotherIsDead) {
  if (!testing::HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  testing::TempDir dir("sync_end_dead");
  TestCluster cluster(dir.path(), 1, 3,
                      CommonFlags(dir.path(), {"--replicas_to_aggregate=2", "--epochs=1"}));
  StartPsAndChief(&cluster);
  cluster.Start("worker:0", {"--train_examples=2400"});  // 800 examples: 25 steps
  cluster.Start("worker:1", {"--train_examples=6000", "--test_only_step_delay_ms=30"});
  cluster.Start("worker:2", {"--train_examples=6000"});
  ASSERT_TRUE(cluster.WaitForStep(5, std::chrono::seconds(120))) << cluster.Tails();
  cluster.Kill9("worker:2");
  ExpectEndsCleanly(&cluster, {"worker:0", "worker:1", "ps:0"});
  const std::string chief = cluster.Output("chief:0");
  EXPECT_NE(chief.find("worker:2 declared dead"), std::string::npos) << chief;
  EXPECT_NE(chief.find("no worker can still push (finished: worker:0, worker:1; dead: "
                       "worker:2): training ends"),
            std::string::npos)
      << chief;
  EXPECT_NE(cluster.Output("worker:1").find("done after 63 local steps"), std::string::npos)
      << cluster.Output("worker:1");
}

}  // namespace
}  // namespace pstrain
