// TensorFlow checkpoints as a user brings them: one of a trained mnist
// (pstrain's trained variables written in TF's format, chief/tf_bundle.h)
// evaluated by the evaluator (--checkpoint) at the accuracy the training
// ended at, and given to a new run's chief as --warm_start_from: at
// learning rate 0 the new run ends at exactly that accuracy, where a cold
// start sits near chance (0.1).
#include <gtest/gtest.h>

#include <cstdio>
#include <regex>
#include <string>

#include "chief/checkpoint.h"
#include "chief/tf_bundle.h"
#include "tests/integration/process_harness.h"

namespace pstrain {
namespace {

using testing::BuildDir;

std::string RunLocal(const std::string& train_dir, std::vector<std::string> extra,
                     std::string* out) {
  std::vector<std::string> argv = {BuildDir() + "/deploy/pstrain_local",
                                   "--ps=1",
                                   "--workers=1",
                                   "--epochs=0",
                                   "--train_dir=" + train_dir,
                                   "--http_port=-1",
                                   "--save_summaries_steps=0"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return testing::RunToCompletion(argv, std::chrono::seconds(300), out);
}

TEST(TensorFlowCheckpoint, IsEvaluatedAtItsAccuracyAndWarmStartsARunThere) {
  if (!testing::HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  testing::TempDir source("warm_start_source"), target("warm_start_target"), tf("warm_start_tf");
  std::string out;
  ASSERT_EQ(RunLocal(source.path(), {"--max_steps=200"}, &out), "exit code 0") << out;
  const double trained = testing::FinalAccuracy(out);
  ASSERT_GT(trained, 0.5) << out;

  auto ckpt = ReadCheckpoint(source.path() + "/" + CheckpointName(200));
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();
  const std::string prefix = tf.path() + "/model.ckpt-200";
  auto writer = TfBundleWriter::Create(prefix);
  ASSERT_TRUE(writer.ok());
  for (const auto& [name, tensor] : ckpt->tensors)
    ASSERT_TRUE((*writer)->AddFloat(name, tensor).ok());
  ASSERT_TRUE((*writer)->AddInt64("global_step", {}, {200}).ok());
  ASSERT_TRUE((*writer)->Finish().ok());

  char evaluated[64];
  std::snprintf(evaluated, sizeof(evaluated), "eval: model.ckpt-200 precision @ 1 = %.4f", trained);
  ASSERT_EQ(testing::RunToCompletion({BuildDir() + "/chief/evaluator", "--checkpoint=" + prefix,
                                      "--eval_dir=" + tf.path() + "/eval"},
                                     std::chrono::seconds(120), &out),
            "exit code 0")
      << out;
  EXPECT_NE(out.find(evaluated), std::string::npos) << out;

  ASSERT_EQ(RunLocal(target.path(),
                     {"--max_steps=3", "--learning_rate=0", "--warm_start_from=" + prefix}, &out),
            "exit code 0")
      << out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, std::regex(R"(warm-started (\d+) of (\d+) variables)")))
      << out;
  EXPECT_EQ(m[1], m[2]);
  EXPECT_EQ(testing::FinalAccuracy(out), trained) << out;

  // A variable the checkpoint holds under another shape stops the chief at
  // start, naming it.
  testing::TempDir again("warm_start_refused");
  EXPECT_NE(RunLocal(again.path(),
                     {"--max_steps=3", "--warm_start_from=" + prefix,
                      "--warm_start_vars=softmax_linear/biases",
                      "--warm_start_map=local3/biases=softmax_linear/biases"},
                     &out),
            "exit code 0");
  EXPECT_NE(out.find("variable softmax_linear/biases (local3/biases in the checkpoint) has shape "
                     "[1024], the model's [10]"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace pstrain
