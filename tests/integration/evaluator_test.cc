// The evaluator binary as a TFJob runs it: checkpoints written as the chief
// writes them, evaluated once (--run_once) or as they appear, results in the
// log and in the evaluator's own event file.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <thread>

#include "chief/checkpoint_manager.h"
#include "chief/evaluation.h"
#include "chief/summary/event_reader.h"
#include "chief/training_done.h"
#include "core/testing/status_assertions.h"
#include "core/testing/wait_until.h"
#include "data/mnist_dataset.h"
#include "nn/model.h"
#include "nn/model_spec.h"
#include "ps/variable_store.h"
#include "tests/integration/process_harness.h"

namespace pstrain {
namespace {

namespace fs = std::filesystem;
using testing::BuildDir;

constexpr char kDataDir[] = "/usr/share/datasets/fashion-mnist";

bool HaveFashionMnist() { return fs::exists(std::string(kDataDir) + "/t10k-labels-idx1-ubyte.gz"); }

// The mnist model's initial variables (seed 1), with moving averages from
// another seed (2) when `with_averages`.
std::map<std::string, Tensor> MnistTensors(bool with_averages) {
  auto model = nn::CreateModel("mnist");
  PS_EXPECT_OK(model);
  std::map<std::string, Tensor> tensors;
  for (const nn::VariableSpec& v : (*model)->variables()) {
    tensors.emplace(v.name, nn::InitialValue(v, 1));
    if (with_averages) {
      tensors.emplace(v.name + "/" + VariableStore::kEmaSuffix, nn::InitialValue(v, 2));
    }
  }
  return tensors;
}

// Precision @ 1 of the initial variables of `seed`, evaluated in process.
double InProcessPrecision(uint64_t seed) {
  auto model = nn::CreateModel("mnist");
  auto test = data::LoadMnistSplit(kDataDir, "t10k");
  EXPECT_TRUE(test.ok()) << test.status().ToString();
  std::vector<Tensor> params;
  for (const nn::VariableSpec& v : (*model)->variables())
    params.push_back(nn::InitialValue(v, seed));
  auto result =
      EvaluatePrecisionAt1(model->get(), params, *test, ImageInputOf(*nn::LoadModelSpec("mnist")));
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result->accuracy();
}

void Save(const std::string& dir, int64_t step, bool with_averages) {
  CheckpointManager manager({dir});
  auto prefix = manager.Save(step, MnistTensors(with_averages));
  ASSERT_TRUE(prefix.ok()) << prefix.status().ToString();
}

// The "eval: ..." lines of the evaluator's output: checkpoint -> precision.
std::vector<std::pair<std::string, double>> EvalLines(const std::string& out) {
  static const std::regex line(
      R"(eval: (model\.ckpt-\d+) test accuracy ([01]\.\d{4}) \(10000 examples\))");
  std::vector<std::pair<std::string, double>> lines;
  for (std::sregex_iterator it(out.begin(), out.end(), line), end; it != end; ++it) {
    lines.emplace_back((*it)[1], std::stod((*it)[2]));
  }
  return lines;
}

// step -> eval/precision_at_1 in the one event file in `eval_dir`.
std::map<int64_t, double> EventScalars(const std::string& eval_dir) {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(eval_dir)) {
    if (entry.path().filename().string().rfind("events.out.tfevents.", 0) == 0) {
      files.push_back(entry.path().string());
    }
  }
  EXPECT_EQ(files.size(), 1u);
  std::map<int64_t, double> scalars;
  if (files.size() != 1) return scalars;
  auto events = ReadEventFile(files[0]);
  EXPECT_TRUE(events.ok()) << events.status().ToString();
  if (!events.ok()) return scalars;
  for (const tensorflow::Event& event : *events) {
    for (const auto& value : event.summary().value()) {
      if (value.tag() == "eval/precision_at_1") scalars[event.step()] = *ScalarValue(value);
    }
  }
  return scalars;
}

std::string RunEvaluator(std::vector<std::string> flags, std::string* out) {
  flags.insert(flags.begin(), BuildDir() + "/chief/evaluator");
  return testing::RunToCompletion(flags, std::chrono::seconds(300), out);
}

TEST(Evaluator, RunOnceEvaluatesTheLatestCheckpointsMovingAverages) {
  if (!HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  testing::TempDir dir("evaluator_once");
  Save(dir.path(), 100, /*with_averages=*/true);
  Save(dir.path(), 250, /*with_averages=*/true);
  std::string out;
  ASSERT_EQ(RunEvaluator({"--train_dir=" + dir.path(), "--run_once"}, &out), "exit code 0") << out;

  const auto lines = EvalLines(out);
  ASSERT_EQ(lines.size(), 1u) << out;
  EXPECT_EQ(lines[0].first, "model.ckpt-250");
  EXPECT_NE(out.find("model.ckpt-250: evaluating the moving averages"), std::string::npos) << out;
  EXPECT_NEAR(lines[0].second, InProcessPrecision(2), 0.00005);

  const auto scalars = EventScalars(dir.path() + "/eval");
  ASSERT_EQ(scalars.size(), 1u);
  ASSERT_EQ(scalars.count(250), 1u);
  EXPECT_NEAR(scalars.at(250), lines[0].second, 0.00005);
}

TEST(Evaluator, WithoutEveryMovingAverageEvaluatesTheVariables) {
  if (!HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  testing::TempDir dir("evaluator_no_ema");
  auto tensors = MnistTensors(/*with_averages=*/true);
  tensors.erase(std::string("conv1/weights/") + VariableStore::kEmaSuffix);
  PS_ASSERT_OK(CheckpointManager({dir.path()}).Save(30, tensors));
  std::string out;
  ASSERT_EQ(
      RunEvaluator({"--train_dir=" + dir.path(), "--eval_dir=" + dir.path() + "/ev", "--run_once"},
                   &out),
      "exit code 0")
      << out;
  EXPECT_NE(out.find("model.ckpt-30: holds no moving average for every trainable variable; "
                     "evaluating the variables"),
            std::string::npos)
      << out;
  const auto lines = EvalLines(out);
  ASSERT_EQ(lines.size(), 1u) << out;
  EXPECT_NEAR(lines[0].second, InProcessPrecision(1), 0.00005);
  EXPECT_EQ(EventScalars(dir.path() + "/ev").count(30), 1u);
}

TEST(Evaluator, RunOnceSkipsACorruptNewestCheckpointNamingTheFile) {
  if (!HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  testing::TempDir dir("evaluator_corrupt");
  Save(dir.path(), 100, /*with_averages=*/false);
  Save(dir.path(), 200, /*with_averages=*/false);
  {
    // Flip a byte inside the first tensor's data.
    std::fstream f(dir.path() + "/model.ckpt-200.data",
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(8);
    f.put('\x5a');
  }
  std::string out;
  ASSERT_EQ(RunEvaluator({"--train_dir=" + dir.path(), "--run_once"}, &out), "exit code 0") << out;
  EXPECT_TRUE(std::regex_search(
      out, std::regex(R"(skipping checkpoint model\.ckpt-200: .*model\.ckpt-200\.data)")))
      << out;
  const auto lines = EvalLines(out);
  ASSERT_EQ(lines.size(), 1u) << out;
  EXPECT_EQ(lines[0].first, "model.ckpt-100");
  const auto scalars = EventScalars(dir.path() + "/eval");
  ASSERT_EQ(scalars.size(), 1u);
  EXPECT_NEAR(scalars.at(100), lines[0].second, 0.00005);
}

TEST(Evaluator, RunOnceOnAnEmptyTrainDirFailsClearly) {
  if (!HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  testing::TempDir dir("evaluator_empty");
  std::string out;
  EXPECT_EQ(RunEvaluator({"--train_dir=" + dir.path(), "--run_once"}, &out), "exit code 1") << out;
  EXPECT_NE(out.find("nothing to evaluate: no readable checkpoint in --train_dir " + dir.path()),
            std::string::npos)
      << out;
  EXPECT_TRUE(EvalLines(out).empty()) << out;
}

TEST(Evaluator, WatchingEvaluatesEachCheckpointOldestFirst) {
  if (!HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  testing::TempDir dir("evaluator_watch");
  Save(dir.path(), 20, /*with_averages=*/false);
  Save(dir.path(), 10, /*with_averages=*/true);
  std::string out;
  ASSERT_EQ(
      RunEvaluator({"--train_dir=" + dir.path(), "--eval_interval_secs=1", "--max_evaluations=2"},
                   &out),
      "exit code 0")
      << out;
  const auto lines = EvalLines(out);
  ASSERT_EQ(lines.size(), 2u) << out;
  EXPECT_EQ(lines[0].first, "model.ckpt-10");
  EXPECT_EQ(lines[1].first, "model.ckpt-20");
  const auto scalars = EventScalars(dir.path() + "/eval");
  EXPECT_EQ(scalars.size(), 2u);
  EXPECT_NEAR(scalars.at(10), lines[0].second, 0.00005);
  EXPECT_NEAR(scalars.at(20), lines[1].second, 0.00005);
}

// The chief marks the end of training after its final checkpoint; the
// evaluator ends (exit 0) once it has evaluated that one, and not before.
TEST(Evaluator, WatchingEndsAtTheFinalCheckpointTheChiefMarked) {
  if (!HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  testing::TempDir dir("evaluator_done");
  Save(dir.path(), 10, /*with_averages=*/false);
  Save(dir.path(), 30, /*with_averages=*/false);
  PS_ASSERT_OK(MarkTrainingDone(dir.path(), "model.ckpt-30"));
  std::string out;
  ASSERT_EQ(RunEvaluator({"--train_dir=" + dir.path(), "--eval_interval_secs=1"}, &out),
            "exit code 0")
      << out;
  const auto lines = EvalLines(out);
  ASSERT_EQ(lines.size(), 2u) << out;
  EXPECT_EQ(lines[1].first, "model.ckpt-30");
  EXPECT_NE(out.find("training is done (final checkpoint model.ckpt-30); done after 2 "
                     "evaluations"),
            std::string::npos)
      << out;
}

TEST(Evaluator, WatchingGivesUpAfterTimeoutWithoutCheckpoints) {
  if (!HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  testing::TempDir dir("evaluator_timeout");
  std::string out;
  EXPECT_EQ(RunEvaluator({"--train_dir=" + dir.path() + "/not_yet", "--eval_interval_secs=1",
                          "--timeout_secs=2"},
                         &out),
            "exit code 0")
      << out;
  EXPECT_NE(out.find("no new checkpoint for 2 s (--timeout_secs); done after 0 "
                     "evaluations"),
            std::string::npos)
      << out;
}

// Sends SIGTERM once the evaluator watches the train dir; waits for its exit.
void SigtermOnceWatching(testing::RunningTask* task) {
  WaitUntil(
      [&] {
        return !task->running() ||
               task->output().find("evaluating checkpoints in") != std::string::npos;
      },
      std::chrono::seconds(60), std::chrono::milliseconds(20));
  ASSERT_TRUE(task->running()) << task->output();
  task->process()->Signal(SIGTERM);
  ASSERT_TRUE(task->WaitForExit(std::chrono::seconds(30))) << task->output();
}

// Before the chief has marked the end of training, SIGTERM is an eviction:
// exit 143, retryable.
TEST(Evaluator, SigtermBeforeTheEndOfTrainingExits143) {
  if (!HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  testing::TempDir dir("evaluator_sigterm");
  testing::RunningTask task("cmd", {BuildDir() + "/chief/evaluator", "--train_dir=" + dir.path()});
  ASSERT_NO_FATAL_FAILURE(SigtermOnceWatching(&task));
  EXPECT_EQ(task.process()->exit_description(), "exit code 143") << task.output();
  EXPECT_NE(task.output().find("stopping after 0 evaluations"), std::string::npos) << task.output();
  EXPECT_NE(task.output().find("stopped before the job was done (signal Terminated): exit 143"),
            std::string::npos)
      << task.output();
}

// Once the chief has marked the end of training, SIGTERM (an operator
// cleaning up) ends the evaluator with 0, even before it has evaluated the
// final checkpoint.
TEST(Evaluator, SigtermAfterTheEndOfTrainingExits0) {
  if (!HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  testing::TempDir dir("evaluator_sigterm_done");
  PS_ASSERT_OK(MarkTrainingDone(dir.path(), "model.ckpt-30"));  // not written yet
  testing::RunningTask task("cmd", {BuildDir() + "/chief/evaluator", "--train_dir=" + dir.path()});
  ASSERT_NO_FATAL_FAILURE(SigtermOnceWatching(&task));
  EXPECT_EQ(task.process()->exit_description(), "exit code 0") << task.output();
  EXPECT_NE(task.output().find("training is done (final checkpoint model.ckpt-30)"),
            std::string::npos)
      << task.output();
}

TEST(Evaluator, BadFlagsExit1AndABadClusterSpecExits2) {
  std::string out;
  EXPECT_EQ(RunEvaluator({"--run_once"}, &out), "exit code 1") << out;
  EXPECT_NE(out.find("--train_dir or --checkpoint is required"), std::string::npos) << out;
  EXPECT_EQ(RunEvaluator({"--train_dir=/tmp", "--cluster_spec=/nonexistent/cluster.json"}, &out),
            "exit code 2")
      << out;
  EXPECT_NE(out.find("evaluator: invalid cluster spec"), std::string::npos) << out;
}

}  // namespace
}  // namespace pstrain
