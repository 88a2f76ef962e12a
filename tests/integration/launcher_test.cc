// pstrain_local as a person at a terminal meets it: its flags and the
// tasks' (a typo is refused before anything starts), Ctrl-C to the whole
// foreground process group (the chief saves the newest step), and a job
// that cannot go on ending instead of waiting.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <regex>

#include "chief/checkpoint.h"
#include "core/testing/wait_until.h"
#include "tests/integration/process_harness.h"

namespace pstrain {
namespace {

using testing::BuildDir;

// The launcher's own flags are parsed by CLI11: --help lists them; a bad
// value, a flag the launcher sets itself, or a flag no task takes (a typo of
// the launcher's or of a task's) exits 1 naming it and the nearest real
// flag, and nothing starts.
TEST(Launcher, HelpAndBadFlagsRefusedBeforeAnythingStarts) {
  const std::string launcher = BuildDir() + "/deploy/pstrain_local";
  std::string out;
  EXPECT_EQ(testing::RunToCompletion({launcher, "--help"}, std::chrono::seconds(20), &out),
            "exit code 0");
  for (const char* flag : {"--ps", "--workers", "--bin_dir", "--host", "--grace_secs", "--tls"}) {
    EXPECT_NE(out.find(flag), std::string::npos) << flag << "\n" << out;
  }
  const struct {
    std::vector<std::string> args;
    const char* says;
  } bad[] = {
      {{"--ps=0"}, "--ps: Value 0 not in range 1 to 1000"},
      {{"--workers=two"}, "--workers"},
      {{"--job=ps"}, "pstrain_local: --job is set by the launcher"},
      {{"--tls_ca=x"}, "--tls_ca is set by the launcher: use --tls"},
      {{"--listen_host=0.0.0.0"}, "--listen_host is set by the launcher: use --host"},
      {{"--lerning_rate=0.1"}, "no task takes --lerning_rate; did you mean --learning_rate?"},
      {{"--epoch=1"}, "no task takes --epoch; did you mean --epochs?"},
      {{"--worker=2"}, "no task takes --worker; did you mean --workers?"},
      {{"--model=mnist", "--epochs"}, "--epochs needs a value"},
  };
  for (const auto& b : bad) {
    std::vector<std::string> argv = {launcher};
    argv.insert(argv.end(), b.args.begin(), b.args.end());
    EXPECT_EQ(testing::RunToCompletion(argv, std::chrono::seconds(60), &out), "exit code 1")
        << b.args[0];
    EXPECT_NE(out.find(b.says), std::string::npos) << b.args[0] << "\n" << out;
    EXPECT_EQ(out.find("chief:0"), std::string::npos) << "a task started: " << out;
  }
}

// A terminal's Ctrl-C is SIGINT to the whole foreground process group. The
// tasks run in groups of their own, so only the launcher gets it; it stops
// the worker, then the chief, which saves a checkpoint of the newest step
// while the ps tasks still serve, then the ps tasks; exit 130.
TEST(Launcher, CtrlCToTheProcessGroupSavesTheNewestStep) {
  if (!testing::HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  testing::TempDir dir("launcher_ctrl_c");
  testing::RunningTask launcher(
      "launcher",
      {BuildDir() + "/deploy/pstrain_local", "--ps=2", "--workers=1", "--epochs=0",
       "--log_frequency=10", "--train_dir=" + dir.path(), "--http_port=-1", "--grace_secs=30"});
  WaitUntil(
      [&] {
        return !launcher.running() || launcher.output().find("step 10,") != std::string::npos;
      },
      std::chrono::seconds(120), std::chrono::milliseconds(100));
  ASSERT_NE(launcher.output().find("step 10,"), std::string::npos) << launcher.output();
  launcher.process()->SignalGroup(SIGINT);
  ASSERT_TRUE(launcher.WaitForExit(std::chrono::seconds(120))) << launcher.output();
  const std::string& out = launcher.output();
  EXPECT_EQ(launcher.process()->exit_description(), "exit code 130") << out;
  EXPECT_NE(out.find("pstrain_local: Interrupt; stopping the cluster"), std::string::npos) << out;
  // The worker stopped first, so no step came after the chief's save.
  std::smatch stopped;
  ASSERT_TRUE(std::regex_search(
      out, stopped,
      std::regex(R"(\[worker:0\] .*stopped after \d+ local steps, global_step (\d+))")))
      << out;
  EXPECT_NE(out.find("[chief:0]"), std::string::npos);
  auto state = ReadCheckpointState(dir.path());
  ASSERT_TRUE(state.ok()) << state.status().ToString() << "\n" << out;
  auto ckpt = ReadCheckpoint(dir.path() + "/" + state->latest);
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();
  EXPECT_EQ(ckpt->global_step, std::stoll(stopped[1])) << out;
  // Neither ps task was stopped before the save: both shut down after it.
  EXPECT_EQ(out.find("Broken pipe"), std::string::npos) << out;
  // No task outlives the launcher. ("[-]" keeps pgrep's own shell out.)
  const std::string pgrep = "pgrep -f '[-]-train_dir=" + dir.path() + "' > /dev/null";
  EXPECT_NE(std::system(pgrep.c_str()), 0) << "a task is still running";
}

// A second Ctrl-C while the job stops gracefully kills every task at once,
// saying so. The worker's steps last 30 s, so the first stop is still
// waiting for it when the second comes.
TEST(Launcher, ASecondCtrlCKillsEveryTaskAtOnce) {
  if (!testing::HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  testing::TempDir dir("launcher_second_ctrl_c");
  testing::RunningTask launcher(
      "launcher", {BuildDir() + "/deploy/pstrain_local", "--ps=1", "--workers=1", "--epochs=0",
                   "--test_only_step_delay_ms=30000", "--train_dir=" + dir.path(), "--http_port=-1",
                   "--grace_secs=60"});
  auto wait_for = [&](const std::string& text) {
    return WaitUntil(
        [&] { return !launcher.running() || launcher.output().find(text) != std::string::npos; },
        std::chrono::seconds(120), std::chrono::milliseconds(50));
  };
  ASSERT_TRUE(wait_for("model is ready; training")) << launcher.output();
  launcher.process()->SignalGroup(SIGINT);
  ASSERT_TRUE(wait_for("stopping the cluster")) << launcher.output();
  launcher.process()->SignalGroup(SIGINT);
  // Well before the worker's 30 s step could end.
  ASSERT_TRUE(launcher.WaitForExit(std::chrono::seconds(20))) << launcher.output();
  EXPECT_EQ(launcher.process()->exit_description(), "exit code 130") << launcher.output();
  EXPECT_NE(launcher.output().find("pstrain_local: Interrupt while stopping; killing every task "
                                   "now"),
            std::string::npos)
      << launcher.output();
  const std::string pgrep = "pgrep -f '[-]-train_dir=" + dir.path() + "' > /dev/null";
  EXPECT_NE(std::system(pgrep.c_str()), 0) << "a task is still running";
}

// A worker of another model than the chief's stops with exit 1, and the
// chief and the ps tasks learn of it through ps:0: the chief ends the job
// with exit 1 naming the worker and both models, and the ps tasks exit.
TEST(Launcher, AWorkerOfAnotherModelEndsTheJob) {
  if (!testing::HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  testing::TempDir dir("placement_mismatch");
  auto spec = testing::MakeLocalSpec(dir.path(), 2, 1);
  auto task = [&](const std::string& bin, const std::string& job, int index,
                  std::vector<std::string> extra) {
    std::vector<std::string> argv = {BuildDir() + bin, "--cluster_spec=" + spec.path,
                                     "--job=" + job, "--task=" + std::to_string(index)};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  };
  testing::RunningTask ps0("ps:0", task("/ps/ps_server", "ps", 0, {}));
  testing::RunningTask ps1("ps:1", task("/ps/ps_server", "ps", 1, {}));
  testing::RunningTask chief(
      "chief:0", task("/chief/chief", "chief", 0, {"--train_dir=" + dir.path(), "--http_port=-1"}));
  std::string out;
  EXPECT_EQ(testing::RunToCompletion(task("/worker/worker", "worker", 0, {"--model=mnist_bn"}),
                                     std::chrono::seconds(120), &out),
            "exit code 1")
      << out;
  EXPECT_NE(out.find("another placement"), std::string::npos) << out;
  ASSERT_TRUE(chief.WaitForExit(std::chrono::seconds(60))) << chief.output();
  EXPECT_EQ(chief.process()->exit_description(), "exit code 1") << chief.output();
  EXPECT_TRUE(std::regex_search(
      chief.output(),
      std::regex(
          R"(the job failed: worker:0 failed: .*worker:0 runs model mnist_bn: ps:0 .* another placement.*\(the chief runs model mnist\))")))
      << chief.output();
  for (testing::RunningTask* ps : {&ps0, &ps1}) {
    ASSERT_TRUE(ps->WaitForExit(std::chrono::seconds(60))) << ps->output();
    EXPECT_NE(ps->output().find("shutting down: the job failed: worker:0 failed"),
              std::string::npos)
        << ps->output();
  }
}

// A spec naming a worker that never starts: the chief's progress names it,
// and --startup_timeout_secs after the model is ready the chief ends the
// job with exit 1 naming it.
TEST(Launcher, AWorkerNeverHeardFromEndsTheJobNamingIt) {
  if (!testing::HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  testing::TempDir dir("never_heard");
  testing::TestCluster cluster(dir.path(), 1, 2,
                               {"--train_dir=" + dir.path(), "--http_port=-1", "--max_steps=20",
                                "--startup_timeout_secs=5", "--save_summaries_steps=0"});
  cluster.Start("ps:0");
  cluster.Start("chief:0");
  cluster.Start("worker:0");
  ASSERT_TRUE(cluster.WaitForExit("chief:0", std::chrono::seconds(120))) << cluster.Tails();
  testing::RunningTask* chief = cluster.task("chief:0");
  EXPECT_EQ(chief->process()->exit_description(), "exit code 1") << cluster.Tails();
  // worker:0 too, where a loaded machine kept it from reporting in time.
  EXPECT_TRUE(std::regex_search(
      chief->output(),
      std::regex(
          R"((worker:0, )?worker:1 never reported to ps:0 within --startup_timeout_secs \(5 s\))")))
      << chief->output();
  ASSERT_TRUE(cluster.WaitForExit("ps:0", std::chrono::seconds(60))) << cluster.Tails();
}

// A ps whose host name does not resolve: the chief says so in those words,
// not only that its deadline passed.
TEST(Launcher, AHostNameThatDoesNotResolveIsSaid) {
  if (!testing::HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  testing::TempDir dir("unresolved");
  std::string out;
  const std::string result = testing::RunToCompletion(
      {BuildDir() + "/chief/chief", "--startup_timeout_secs=3", "--http_port=-1",
       "--train_dir=" + dir.path()},
      std::chrono::seconds(60), &out,
      {R"(TF_CONFIG={"cluster":{"chief":["127.0.0.1:1"],"ps":["no-such-ps.invalid:2222"]},)"
       R"("task":{"type":"chief","index":0}})"});
  EXPECT_EQ(result, "exit code 138") << out;
  EXPECT_NE(out.find("the host name no-such-ps.invalid does not resolve"), std::string::npos)
      << out;
}

}  // namespace
}  // namespace pstrain
