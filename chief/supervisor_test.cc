// Supervisor against an in-process ps (ps/in_process_ps.h): initializing from
// the seed, restoring a checkpoint into an empty ps, and ending the job when
// the workers are done, with a real model, real checkpoint files and the
// real ps logic; no network. Whole clusters of processes: tests/integration/.
#include "chief/supervisor.h"

#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "chief/checkpoint.h"
#include "core/test_util.h"
#include "nn/model_spec.h"
#include "nn/test_models.h"
#include "ps/in_process_ps.h"

namespace pstrain {
namespace {

class SupervisorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto spec = nn::ParseModelSpec(nn::TinyLinearNetText(0.5f), "the tiny net");
    ASSERT_TRUE(spec.ok()) << spec.status().ToString();
    auto model = nn::CreateModel(*spec);
    ASSERT_TRUE(model.ok());
    model_ = std::move(model).value();
    for (const nn::VariableSpec& v : model_->variables()) infos_.push_back({v.name, v.shape, 0});
    auto placement =
        cluster::ComputePlacement(infos_, 1, cluster::PlacementStrategy::kGreedy, 1 << 20);
    ASSERT_TRUE(placement.ok());
    placement_ = *placement;

    std::mt19937 rng(2);
    test_set_.count = 64;
    test_set_.rows = test_set_.cols = 4;
    test_set_.pixels.resize(64 * 16);
    for (uint8_t& p : test_set_.pixels) p = static_cast<uint8_t>(rng() % 256);
    for (int i = 0; i < 64; ++i) test_set_.labels.push_back(static_cast<int32_t>(rng() % 10));
  }

  // A fleet over a fresh, empty in-process ps; *ps gets that ps.
  std::unique_ptr<PsFleet> NewFleet(InProcessPs** ps) {
    std::vector<std::unique_ptr<PsConnection>> connections;
    auto one = std::make_unique<InProcessPs>(0);
    *ps = one.get();
    connections.push_back(std::move(one));
    return std::make_unique<PsFleet>(std::move(connections), infos_, placement_);
  }

  SupervisorOptions Options() const {
    SupervisorOptions o;
    o.train_dir = dir_.path();
    o.seed = 7;
    o.num_workers = 1;
    o.init.set_num_workers(1);
    o.init.mutable_optimizer()->set_name("GradientDescent");
    o.init.mutable_optimizer()->set_learning_rate(0.5f);
    o.startup_timeout = std::chrono::seconds(5);
    o.poll_interval = std::chrono::milliseconds(10);
    o.save_summaries_steps = 0;
    return o;
  }

  std::vector<Tensor> Pull(PsFleet* fleet, int64_t* step) {
    std::vector<Tensor> values;
    PsFleet::PsSteps steps;
    EXPECT_TRUE(fleet->PullVariables(&values, &steps).ok());
    *step = steps.empty() ? -1 : steps[0];
    return values;
  }

  test_util::TempDir dir_;
  std::unique_ptr<nn::Model> model_;
  std::vector<cluster::VariableInfo> infos_;
  cluster::Placement placement_;
  data::ImageDataset test_set_;
  StopNotice stop_;
};

TEST_F(SupervisorTest, StartInitializesEveryVariableFromTheSeed) {
  InProcessPs* ps = nullptr;
  auto fleet = NewFleet(&ps);
  Supervisor sup(model_.get(), fleet.get(), &test_set_, nullptr, &stop_, Options());
  ASSERT_TRUE(sup.Start().ok());
  int64_t step = 0;
  std::vector<Tensor> values = Pull(fleet.get(), &step);
  EXPECT_EQ(step, 0);
  ASSERT_EQ(values.size(), model_->variables().size());
  for (size_t v = 0; v < values.size(); ++v) {
    const Tensor want = nn::InitialValue(model_->variables()[v], 7);
    for (int64_t i = 0; i < want.size(); ++i) ASSERT_EQ(values[v][i], want[i]) << v << " " << i;
  }
  EXPECT_EQ(sup.restores(), 0);
}

TEST_F(SupervisorTest, AnEmptyPsIsRestoredFromTheLatestCheckpoint) {
  std::vector<Tensor> trained;
  {
    InProcessPs* ps = nullptr;
    auto fleet = NewFleet(&ps);
    Supervisor sup(model_.get(), fleet.get(), &test_set_, nullptr, &stop_, Options());
    ASSERT_TRUE(sup.Start().ok());
    std::vector<Tensor> grads;
    for (const nn::VariableSpec& v : model_->variables()) {
      grads.emplace_back(v.shape);
      grads.back().Fill(1.0f);
    }
    ASSERT_TRUE(fleet->PushGradients(grads, 0, 1, {0}, /*sync=*/false).ok());
    stop_.Notify("test");
    ASSERT_TRUE(sup.SaveOnStop().ok());
    int64_t step = 0;
    trained = Pull(fleet.get(), &step);
    ASSERT_EQ(step, 1);
  }
  // A new chief with a new, empty ps (both restarted) carries on from there.
  InProcessPs* ps = nullptr;
  auto fleet = NewFleet(&ps);
  StopNotice stop;
  Supervisor sup(model_.get(), fleet.get(), &test_set_, nullptr, &stop, Options());
  ASSERT_TRUE(sup.Start().ok());
  int64_t step = 0;
  std::vector<Tensor> values = Pull(fleet.get(), &step);
  EXPECT_EQ(step, 1);
  for (size_t v = 0; v < values.size(); ++v) {
    for (int64_t i = 0; i < values[v].size(); ++i) ASSERT_EQ(values[v][i], trained[v][i]);
  }
  // The biases started at 0.5 and took one step of 0.5 x 1.
  EXPECT_EQ(values[1][0], 0.0f);
}

TEST_F(SupervisorTest, MonitorEndsWhenTheWorkerIsDoneAndFinishSavesAndShutsTheJobDown) {
  InProcessPs* ps = nullptr;
  auto fleet = NewFleet(&ps);
  Supervisor sup(model_.get(), fleet.get(), &test_set_, nullptr, &stop_, Options());
  ASSERT_TRUE(sup.Start().ok());
  ASSERT_TRUE(ps->Heartbeat(0, 1, 2.3f).ok());
  ASSERT_TRUE(ps->WorkerDone(0).ok());
  ASSERT_TRUE(sup.Monitor().ok());
  ASSERT_TRUE(sup.Finish().ok());
  auto state = ReadCheckpointState(dir_.path());
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  auto ckpt = ReadCheckpoint(dir_.path() + "/model.ckpt-0");
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();
  EXPECT_EQ(ckpt->tensors.count("logits/weights"), 1u);
  EXPECT_EQ(ps->shutdown_reason(), "training done");
}

TEST_F(SupervisorTest, AnEvaluationThatReachesTheTargetEndsTraining) {
  InProcessPs* ps = nullptr;
  auto fleet = NewFleet(&ps);
  SupervisorOptions options = Options();
  options.eval_secs = 0.01;
  options.target_accuracy = 1e-9;  // any correct answer on the test set reaches it
  Supervisor sup(model_.get(), fleet.get(), &test_set_, nullptr, &stop_, options);
  ASSERT_TRUE(sup.Start().ok());
  auto beat = ps->Heartbeat(0, 1, 2.3f);
  ASSERT_TRUE(beat.ok());
  EXPECT_EQ(beat->training_ended(), "");
  Status monitored;
  std::thread monitor([&] { monitored = sup.Monitor(); });
  // The worker's part: heartbeat until told to stop, then report done.
  std::string ended;
  for (int i = 0; i < 1000 && ended.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    beat = ps->Heartbeat(0, 1, 2.3f);
    ASSERT_TRUE(beat.ok());
    ended = beat->training_ended();
  }
  EXPECT_NE(ended.find("reached the target"), std::string::npos) << ended;
  ASSERT_TRUE(ps->WorkerDone(0).ok());
  monitor.join();
  EXPECT_TRUE(monitored.ok()) << monitored.ToString();
  ASSERT_TRUE(sup.Finish().ok());
}

}  // namespace
}  // namespace pstrain
