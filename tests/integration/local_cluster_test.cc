// The whole system as a user runs it: pstrain_local starts a chief, 2 ps
// tasks and 2 workers as processes on loopback, trains mnist briefly on
// Fashion-MNIST, and the chief evaluates and writes the final variables.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <thread>

#include "chief/checkpoint.h"
#include "chief/summary/event_reader.h"
#include "core/testing/wait_until.h"
#include "tests/integration/process_harness.h"

namespace pstrain {
namespace {

using testing::BuildDir;

TEST(LocalCluster, TrainsBrieflyLossFallsAndFinalVariablesAreSaved) {
  if (!testing::HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  testing::TempDir dir("local_cluster");
  std::string out;
  const std::string result =
      testing::RunToCompletion({BuildDir() + "/deploy/pstrain_local", "--ps=2", "--workers=2",
                                "--model=mnist", "--max_steps=100", "--log_frequency=10",
                                "--save_summaries_steps=50", "--train_dir=" + dir.path()},
                               std::chrono::seconds(600), &out);
  ASSERT_EQ(result, "exit code 0") << out;

  // Each worker reports its first and last loss; both must have fallen.
  std::regex done(
      R"(\[worker:(\d)\] .*done after (\d+) local steps, global_step (\d+), \d+ stale gradients dropped, batch loss ([0-9.]+) -> ([0-9.]+))");
  int workers = 0;
  for (std::sregex_iterator it(out.begin(), out.end(), done), end; it != end; ++it) {
    ++workers;
    const double first = std::stod((*it)[4]), last = std::stod((*it)[5]);
    EXPECT_LT(last, first - 0.1) << it->str();
    EXPECT_GT(std::stoi((*it)[2]), 5) << it->str();
  }
  EXPECT_EQ(workers, 2) << out;

  std::smatch final_line;
  ASSERT_TRUE(std::regex_search(
      out, final_line,
      std::regex(R"(final: step (\d+), test accuracy (0\.\d{4}) \(10000 examples\))")))
      << out;
  const int64_t step = std::stoll(final_line[1]);
  EXPECT_GE(step, 100);
  // Twice chance (0.1): 100 asynchronous steps reached 0.30 to 0.39 in five
  // runs, the spread of two workers' interleaving.
  EXPECT_GT(std::stod(final_line[2]), 0.2) << "100 steps learn something";

  auto state = ReadCheckpointState(dir.path());
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  auto ckpt = ReadCheckpoint(dir.path() + "/" + state->latest);
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();
  EXPECT_EQ(ckpt->global_step, step);
  // Ten variables, each with its Momentum slot, whole (not per shard).
  EXPECT_EQ(ckpt->tensors.size(), 20u);
  EXPECT_EQ(ckpt->tensors.at("local3/weights").shape(), (Shape{3136, 1024}));
  EXPECT_EQ(ckpt->tensors.at("local3/weights/Momentum").shape(), (Shape{3136, 1024}));
  EXPECT_NE(out.find("pstrain_local: chief:0 finished"), std::string::npos);

  // The chief's TensorBoard file, read back with every CRC checked.
  std::smatch path;
  ASSERT_TRUE(std::regex_search(out, path, std::regex(R"(TensorBoard summaries: (\S+))"))) << out;
  auto events = ReadEventFile(path[1]);
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  std::set<std::string> tags;
  for (const auto& e : *events) {
    for (const auto& v : e.summary().value()) tags.insert(v.tag());
  }
  for (const char* tag :
       {"loss", "learning_rate", "global_step/sec", "examples/sec", "conv1/weights",
        "conv1/weights/gradient", "input/image/0", "eval/precision_at_1"}) {
    EXPECT_TRUE(tags.count(tag)) << "no summary " << tag;
  }
  EXPECT_NE(out.find("status page: http://127.0.0.1:"), std::string::npos);
}

TEST(LocalCluster, AFailingTaskStopsEverythingAndIsNamed) {
  testing::TempDir dir("local_cluster_fail");
  std::string out;
  // Only the workers read --batch_size; a negative one makes them fail.
  const std::string result =
      testing::RunToCompletion({BuildDir() + "/deploy/pstrain_local", "--ps=1", "--workers=1",
                                "--batch_size=-1", "--train_dir=" + dir.path(), "--grace_secs=5"},
                               std::chrono::seconds(120), &out);
  EXPECT_EQ(result, "exit code 1") << out;
  EXPECT_NE(out.find("pstrain_local: worker:0 failed (exit code 1)"), std::string::npos) << out;
  EXPECT_NE(out.find("--batch_size must be positive"), std::string::npos) << out;
}

// The chief evaluates while training; the first evaluation at or above the
// target ends the job long before its epochs would: every worker stops after
// its step and reports done, and every process exits 0.
TEST(LocalCluster, ReachingTheTargetAccuracyEndsTheJob) {
  if (!testing::HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  testing::TempDir dir("target_accuracy");
  std::string out;
  const std::string result = testing::RunToCompletion(
      {BuildDir() + "/deploy/pstrain_local", "--ps=1", "--workers=2", "--model=mnist",
       "--epochs=20", "--eval_secs=3", "--target_accuracy=0.5", "--http_port=-1",
       "--save_summaries_steps=0", "--train_dir=" + dir.path()},
      std::chrono::seconds(600), &out);
  ASSERT_EQ(result, "exit code 0") << out;
  std::smatch reached;
  ASSERT_TRUE(std::regex_search(
      out, reached,
      std::regex(R"(test accuracy (0\.\d{4}) reached the target 0\.5000 at step (\d+))")))
      << out;
  EXPECT_GE(std::stod(reached[1]), 0.5);
  for (const char* worker : {"worker:0", "worker:1"}) {
    EXPECT_NE(out.find(std::string(worker) + " stopping: the chief ended training"),
              std::string::npos)
        << worker;
  }
  std::smatch final_line;
  ASSERT_TRUE(std::regex_search(out, final_line,
                                std::regex(R"(final: step (\d+), test accuracy (0\.\d{4}))")))
      << out;
  // The job ended at the target, not after its 20 epochs of 60,000 images
  // in batches of 128 (9,375 steps): how far past the evaluated step the
  // workers got while the chief evaluated depends on the machine's speed.
  EXPECT_LT(std::stoll(final_line[1]), 9375);
  EXPECT_GE(std::stoll(final_line[1]), std::stoll(reached[2]));
}

// The example network shipped in docs/ trains in the local cluster, as the
// README says: a user's network needs no code.
TEST(LocalCluster, UserNetworkFromDocsTrains) {
  if (!testing::HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  testing::TempDir dir("user_net");
  std::string out;
  const std::string result = testing::RunToCompletion(
      {BuildDir() + "/deploy/pstrain_local", "--ps=1", "--workers=2",
       "--model=" + std::string(PSTRAIN_SOURCE_DIR) + "/docs/example_net.pbtxt", "--max_steps=60",
       "--http_port=-1", "--save_summaries_steps=0", "--train_dir=" + dir.path()},
      std::chrono::seconds(600), &out);
  ASSERT_EQ(result, "exit code 0") << out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, std::regex(R"(final: step (\d+), test accuracy (0\.\d+))")))
      << out;
  // 0.58 and 0.59 in two runs; two workers interleave differently each time.
  EXPECT_GT(std::stod(m[2]), 0.35) << "60 steps lift it well above chance (0.1)";
  auto ckpt = ReadCheckpoint(dir.path() + "/model.ckpt-" + std::string(m[1]));
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();
  for (const char* name : {"conv1/weights", "hidden/weights", "logits/biases"}) {
    EXPECT_EQ(ckpt->tensors.count(name), 1u) << name << " saved under its spec's name";
  }
}

// Two CPU towers in a worker: every step averages the gradients of two
// batches of 32.
TEST(LocalCluster, TwoTowersPerWorkerTrain) {
  if (!testing::HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  testing::TempDir dir("towers");
  std::string out;
  const std::string result = testing::RunToCompletion(
      {BuildDir() + "/deploy/pstrain_local", "--ps=1", "--workers=1",
       "--model=" + std::string(PSTRAIN_SOURCE_DIR) + "/docs/example_net.pbtxt", "--num_towers=2",
       "--batch_size=32", "--max_steps=60", "--log_frequency=20", "--http_port=-1",
       "--save_summaries_steps=0", "--train_dir=" + dir.path()},
      std::chrono::seconds(600), &out);
  ASSERT_EQ(result, "exit code 0") << out;
  EXPECT_NE(out.find("runs " + std::string(PSTRAIN_SOURCE_DIR) +
                     "/docs/example_net.pbtxt on 2 towers, each on cpu"),
            std::string::npos)
      << out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, std::regex(R"(final: step (\d+), test accuracy (0\.\d+))")))
      << out;
  EXPECT_GT(std::stod(m[2]), 0.5) << "60 steps of 2 x 32 lift it well above chance (0.1)";
}

// cifar10 end to end on real data: Fashion-MNIST written in the CIFAR-10
// binary layout, read by the CIFAR reader, distorted and shuffled by the
// input pipeline, trained by the cluster and evaluated on central crops.
TEST(LocalCluster, Cifar10TrainsOnFashionMnistInTheCifarLayout) {
  if (!testing::HaveFashionMnist()) GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  testing::TempDir dir("cifar10_fmnist");
  std::string out;
  ASSERT_EQ(testing::RunToCompletion(
                {BuildDir() + "/tools/pstrain_fmnist_to_cifar", "--output_dir=" + dir.path()},
                std::chrono::seconds(120), &out),
            "exit code 0")
      << out;
  const std::string result = testing::RunToCompletion(
      {BuildDir() + "/deploy/pstrain_local", "--ps=2", "--workers=2", "--model=cifar10",
       "--data_dir=" + dir.path(), "--max_steps=30", "--epochs=0", "--min_after_dequeue=2000",
       "--http_port=-1", "--save_summaries_steps=0", "--train_dir=" + dir.path() + "/train"},
      std::chrono::seconds(600), &out);
  ASSERT_EQ(result, "exit code 0") << out;
  EXPECT_NE(out.find("DISTORT, shuffle buffer of 2000+"), std::string::npos) << out;
  EXPECT_TRUE(std::regex_search(out, std::regex(R"(final: step \d+, test accuracy 0\.\d+)")))
      << out;
  EXPECT_NE(out.find("optimizer GradientDescent, learning rate 0.1 decayed by 0.100000 every "
                     "136718 steps (staircase), moving averages with decay 0.999900"),
            std::string::npos)
      << "cifar10's recipe\n"
      << out;
}

// A bad model spec stops a task at start: exit 1, one line naming the layer.
TEST(LocalCluster, BadModelSpecExits1NamingTheLayer) {
  testing::TempDir dir("bad_spec");
  const std::string path = dir.path() + "/bad.pbtxt";
  std::ofstream(path) << "input_shape: [28, 28, 1] num_classes: 10\n"
                         "layer { name: \"p\" max_pool { window: 40 padding: VALID } }\n";
  auto spec = testing::MakeLocalSpec(dir.path(), 1, 1);
  for (const std::string job : {"worker", "chief"}) {
    std::string out;
    const std::string result =
        testing::RunToCompletion({BuildDir() + "/" + job + "/" + job, "--cluster_spec=" + spec.path,
                                  "--job=" + job, "--task=0", "--model=" + path,
                                  "--train_dir=" + dir.path() + "/train", "--undefok=train_dir"},
                                 std::chrono::seconds(60), &out);
    EXPECT_EQ(result, "exit code 1") << job << out;
    EXPECT_NE(out.find("layer p (max_pool): input [28,28,1] is smaller than the window"),
              std::string::npos)
        << job << out;
  }
}

// fastText's classifier on a text set of its own: its classes come from the
// training file's labels (three here, none named in the spec), and the
// test lines whose label training lacks evaluate as wrong answers, counted
// in the final line.
TEST(LocalCluster, FastTextTakesItsClassesFromItsDataAndCountsUnseenTestLabels) {
  testing::TempDir dir("fasttext_text");
  const std::vector<std::pair<std::string, std::string>> classes = {
      {"net", "web server http proxy"},
      {"sound", "audio mp3 player music"},
      {"games", "game puzzle arcade level"}};
  std::ofstream train(dir.path() + "/train.txt"), test(dir.path() + "/test.txt");
  for (int i = 0; i < 300; ++i) {
    const auto& [label, words] = classes[i % 3];
    train << "__label__" << label << " " << words << " line " << i << "\n";
    if (i < 30) test << "__label__" << label << " " << words << "\n";
  }
  for (int i = 0; i < 3; ++i) test << "__label__tasks install a desktop task " << i << "\n";
  train.close();
  test.close();
  std::string out;
  const std::string result = testing::RunToCompletion(
      {BuildDir() + "/deploy/pstrain_local", "--ps=1", "--workers=1", "--model=fasttext",
       "--data_dir=" + dir.path(), "--batch_size=16", "--epochs=5", "--learning_rate=0.5",
       "--buckets=10000", "--http_port=-1", "--save_summaries_steps=0",
       "--train_dir=" + dir.path() + "/train"},
      std::chrono::seconds(300), &out);
  ASSERT_EQ(result, "exit code 0") << out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      out, m,
      std::regex(R"(final: step \d+, test accuracy (0\.\d+) \(33 examples\).*, 3 with labels )"
                 R"(unseen in training)")))
      << out;
  // The 30 lines of known classes are easy; the 3 others count wrong.
  EXPECT_NEAR(std::stod(m[1]), 30.0 / 33, 0.031) << out;
}

}  // namespace
}  // namespace pstrain
