// TensorFlow checkpoints as a user brings them: one of a trained mnist
// (pstrain's trained variables written in TF's format, chief/tf_bundle.h)
// evaluated by the evaluator (--checkpoint) at the accuracy the training
// ended at, and given to a new run's chief as --warm_start_from (with
// --warm_start_slots, its Momentum slots too): at learning rate 0 the new
// run ends at exactly that accuracy, where a cold start sits near chance
// (0.1); pstrain_export writes it as ONNX. A model of ids saved in TF's
// format holds its table as keys and values tensors, which the projector
// export agrees with. A Keras model trains from its JSON, and warm-starts
// from the checkpoint Keras trained it to at Keras's own test accuracy.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <regex>
#include <string>

#include "chief/checkpoint.h"
#include "chief/tf_bundle.h"
#include "core/atomic_file.h"
#include "core/testing/status_assertions.h"
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
  PS_ASSERT_OK(writer);
  for (const auto& [name, tensor] : ckpt->tensors) PS_ASSERT_OK((*writer)->AddFloat(name, tensor));
  PS_ASSERT_OK((*writer)->AddInt64("global_step", {}, {200}));
  PS_ASSERT_OK((*writer)->Finish());

  char evaluated[64];
  std::snprintf(evaluated, sizeof(evaluated), "eval: model.ckpt-200 test accuracy %.4f", trained);
  ASSERT_EQ(testing::RunToCompletion({BuildDir() + "/chief/evaluator", "--checkpoint=" + prefix,
                                      "--eval_dir=" + tf.path() + "/eval"},
                                     std::chrono::seconds(120), &out),
            "exit code 0")
      << out;
  EXPECT_NE(out.find(evaluated), std::string::npos) << out;

  ASSERT_EQ(RunLocal(target.path(),
                     {"--max_steps=3", "--learning_rate=0", "--warm_start_from=" + prefix,
                      "--warm_start_slots"},
                     &out),
            "exit code 0")
      << out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      out, m, std::regex(R"(warm-started (\d+) of (\d+) variables and (\d+) of their slots)")))
      << out;
  EXPECT_EQ(m[1], m[2]);
  EXPECT_EQ(m[3], m[1]);  // Momentum: one slot a variable
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

  // Exported for serving; a checkpoint without moving averages refuses to
  // export them, and an output that exists stays whole.
  const std::string onnx = tf.path() + "/mnist.onnx";
  ASSERT_EQ(testing::RunToCompletion({BuildDir() + "/export/pstrain_export", "--model=mnist",
                                      "--checkpoint=" + prefix, "--output=" + onnx},
                                     std::chrono::seconds(60), &out),
            "exit code 0")
      << out;
  EXPECT_NE(out.find("wrote " + onnx + ": ONNX opset 13,"), std::string::npos) << out;
  auto exported = ReadFileToString(onnx);
  PS_ASSERT_OK(exported);
  EXPECT_EQ(testing::RunToCompletion(
                {BuildDir() + "/export/pstrain_export", "--model=mnist", "--checkpoint=" + prefix,
                 "--output=" + onnx, "--use_moving_averages"},
                std::chrono::seconds(60), &out),
            "exit code 1");
  EXPECT_NE(out.find("holds no ExponentialMovingAverage for every trainable variable"),
            std::string::npos)
      << out;
  EXPECT_EQ(ReadFileToString(onnx).value(), *exported);
}

// A model with embedding tables saved in TensorFlow's format: the chief
// restarted on the train dir restores the variables and the rows from it,
// and the evaluator evaluates it.
TEST(TensorFlowCheckpoint, AModelOfIdsSavedInTfFormatIsRestoredAndEvaluated) {
  if (!testing::HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  testing::TempDir dir("tf_format_ids");
  std::string out;
  const std::vector<std::string> flags = {"--model=mnist_ids", "--checkpoint_format=tensorflow"};
  std::vector<std::string> first = flags, second = flags;
  first.push_back("--max_steps=60");
  second.push_back("--max_steps=90");
  ASSERT_EQ(RunLocal(dir.path(), first, &out), "exit code 0") << out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, std::regex(R"(final: step (\d+))"))) << out;
  const std::string saved = "model.ckpt-" + m[1].str();
  auto bundle = ReadTfBundle(dir.path() + "/" + saved);
  ASSERT_TRUE(bundle.ok()) << bundle.status().ToString();
  EXPECT_EQ(bundle->at("global_step").int64s, (std::vector<int64_t>{std::stoll(m[1])}));

  // Each table as TF's hash tables export theirs, and as projector files.
  auto ckpt = ReadCheckpoint(dir.path() + "/" + saved);
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();
  ASSERT_EQ(ckpt->tables.size(), 1u);
  const proto::TableCheckpoint& table = ckpt->tables[0];
  const BundleTensor& keys = bundle->at(table.name() + "-keys");
  EXPECT_EQ(keys.shape, (Shape{table.num_rows()}));
  EXPECT_EQ(bundle->at(table.name() + "-values").shape, (Shape{table.num_rows(), table.dim()}));
  const std::string projector = dir.path() + "/projector";
  ASSERT_EQ(testing::RunToCompletion({BuildDir() + "/export/pstrain_export", "--model=mnist_ids",
                                      "--checkpoint=" + dir.path() + "/" + saved,
                                      "--format=projector", "--output=" + projector},
                                     std::chrono::seconds(60), &out),
            "exit code 0")
      << out;
  std::vector<int64_t> sorted = keys.int64s;
  std::sort(sorted.begin(), sorted.end());
  std::string key_lines;
  for (int64_t k : sorted) key_lines += std::to_string(k) + "\n";
  EXPECT_EQ(ReadFileToString(projector + "/pixels_embedding_weights/metadata.tsv").value(),
            key_lines);
  EXPECT_EQ(testing::RunToCompletion({BuildDir() + "/export/pstrain_export", "--model=mnist_ids",
                                      "--checkpoint=" + dir.path() + "/" + saved,
                                      "--output=" + dir.path() + "/ids.onnx"},
                                     std::chrono::seconds(60), &out),
            "exit code 1");
  EXPECT_NE(out.find("looks up an embedding table; ONNX export covers dense networks"),
            std::string::npos)
      << out;

  ASSERT_EQ(RunLocal(dir.path(), second, &out), "exit code 0") << out;
  EXPECT_NE(out.find("restored every ps from " + dir.path() + "/" + saved), std::string::npos)
      << out;
  EXPECT_NE(out.find("final: step 9"), std::string::npos) << out;

  ASSERT_EQ(testing::RunToCompletion({BuildDir() + "/chief/evaluator", "--model=mnist_ids",
                                      "--checkpoint=" + dir.path() + "/" + saved,
                                      "--eval_dir=" + dir.path() + "/eval_once"},
                                     std::chrono::seconds(120), &out),
            "exit code 0")
      << out;
  EXPECT_NE(out.find("eval: " + saved + " test accuracy 0."), std::string::npos) << out;
}

// tests/tensorflow/keras_golden.py's Sequential (Flatten, Dense of tanh
// with an L2 regularizer, Dense of sigmoid, Dense): from its JSON alone it
// trains; given the tf.train.Checkpoint Keras trained it to, at learning
// rate 0 it ends at the test accuracy Keras measured of that checkpoint.
TEST(TensorFlowCheckpoint, AKerasModelTrainsFromItsJsonAndWarmStartsFromKerasCheckpoint) {
  if (!testing::HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  const std::string source = PSTRAIN_SOURCE_DIR;
  const std::string model = "--model=keras:" + source + "/nn/testdata/keras/sequential.json";
  testing::TempDir cold("keras_cold"), warm("keras_warm");
  std::string out;
  ASSERT_EQ(RunLocal(cold.path(),
                     {model, "--max_steps=300", "--optimizer=Adam", "--learning_rate=0.001"}, &out),
            "exit code 0")
      << out;
  EXPECT_GT(testing::FinalAccuracy(out), 0.5) << out;

  std::ifstream measured(source + "/chief/testdata/keras/trained.accuracy");
  double keras_accuracy = 0;
  ASSERT_TRUE(measured >> keras_accuracy);
  ASSERT_EQ(RunLocal(warm.path(),
                     {model, "--max_steps=3", "--learning_rate=0",
                      "--warm_start_from=" + source + "/chief/testdata/keras/trained.ckpt"},
                     &out),
            "exit code 0")
      << out;
  EXPECT_NE(out.find("warm-started 6 of 6 variables"), std::string::npos) << out;
  EXPECT_NEAR(testing::FinalAccuracy(out), keras_accuracy, 1e-4) << out;
}

}  // namespace
}  // namespace pstrain
