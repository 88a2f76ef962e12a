// Trainer against an in-process ps (ps/testing/in_process_ps.h): a real model, a
// real input pipeline over images in memory, the real ps logic; no network.
// Whole clusters of processes: tests/integration/.
#include "worker/trainer.h"
#include "core/testing/wait_until.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <thread>

#include "core/testing/status_assertions.h"
#include "data/input_pipeline.h"
#include "nn/model_spec.h"
#include "nn/test_models.h"
#include "ps/testing/in_process_ps.h"

namespace pstrain {
namespace {

class TrainerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto spec = nn::ParseModelSpec(nn::TinyLinearNetText(0.0f), "the tiny net");
    ASSERT_TRUE(spec.ok()) << spec.status().ToString();
    auto model = nn::CreateModel(*spec);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    model_ = std::move(model).value();

    std::vector<cluster::VariableInfo> infos;
    for (const nn::VariableSpec& v : model_->variables()) {
      infos.push_back({v.name, v.shape, 0});
      initial_.push_back(nn::InitialValue(v, /*seed=*/3));
    }
    auto placement =
        cluster::ComputePlacement(infos, 1, cluster::PlacementStrategy::kGreedy, 1 << 20);
    PS_ASSERT_OK(placement);
    std::vector<std::unique_ptr<PsConnection>> ps;
    ps.push_back(std::make_unique<InProcessPs>(0));
    fleet_ = std::make_unique<PsFleet>(std::move(ps), infos, *placement);
    proto::InitHeader header;
    header.mutable_optimizer()->set_name("GradientDescent");
    header.mutable_optimizer()->set_learning_rate(0.1f);
    header.set_num_workers(1);
    PS_ASSERT_OK(fleet_->InitVariables(initial_, header));

    // 256 random 4x4 images; the label is the brightest quarter of the
    // image, which a linear model can learn.
    std::mt19937 rng(5);
    images_.count = 256;
    images_.rows = images_.cols = 4;
    images_.pixels.resize(256 * 16);
    for (uint8_t& p : images_.pixels) p = static_cast<uint8_t>(rng() % 256);
    for (int64_t i = 0; i < images_.count; ++i) {
      int best = 0, best_sum = -1;
      for (int q = 0; q < 4; ++q) {
        int sum = 0;
        for (int k = 0; k < 4; ++k) sum += images_.pixels[i * 16 + q * 4 + k];
        if (sum > best_sum) best = q, best_sum = sum;
      }
      images_.labels.push_back(best);
    }
  }

  std::unique_ptr<data::InputPipeline> Input(int64_t epochs) {
    data::InputPipelineOptions opts;
    opts.batch_size = 32;
    opts.epochs = epochs;
    auto input = data::InputPipeline::Create(&images_, opts);
    EXPECT_TRUE(input.ok()) << input.status().ToString();
    return input.ok() ? std::move(input).value() : nullptr;
  }

  std::unique_ptr<nn::Model> model_;
  std::vector<Tensor> initial_;
  std::unique_ptr<PsFleet> fleet_;
  data::ImageDataset images_;
  StopNotice stop_;
};

TEST_F(TrainerTest, AsyncRunsEveryBatchOfItsEpochsAndTheLossFalls) {
  auto input = Input(/*epochs=*/20);
  ASSERT_NE(input, nullptr);
  TrainerOptions options;
  options.log_frequency = 1000;
  Trainer trainer(model_.get(), fleet_.get(), input.get(), nullptr, &stop_, options);
  auto result = trainer.Run();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->local_steps, 20 * 256 / 32);
  EXPECT_EQ(result->global_step, 20 * 256 / 32);
  EXPECT_LT(result->last_loss, 0.8f * result->first_loss);

  std::vector<Tensor> values;
  PsFleet::PsSteps steps;
  PS_ASSERT_OK(fleet_->PullVariables(&values, &steps));
  EXPECT_EQ(steps[0], 160);
  EXPECT_NE(values[0][0], initial_[0][0]);  // trained where the trainer pushed
}

TEST_F(TrainerTest, StopsAtMaxSteps) {
  auto input = Input(/*epochs=*/0);  // for ever
  ASSERT_NE(input, nullptr);
  TrainerOptions options;
  options.max_steps = 7;
  Trainer trainer(model_.get(), fleet_.get(), input.get(), nullptr, &stop_, options);
  auto result = trainer.Run();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->global_step, 7);
  EXPECT_EQ(result->local_steps, 7);
}

TEST_F(TrainerTest, StopsAfterItsStepWhenTheChiefEndsTraining) {
  auto input = Input(/*epochs=*/0);
  ASSERT_NE(input, nullptr);
  HeartbeatSender heartbeat(fleet_->client(0), 0, std::chrono::milliseconds(10));
  TrainerOptions options;
  options.max_steps = 100000;  // a trainer that ignored the chief would stop here
  options.log_frequency = 100000;
  // The chief's part: once training is under way, end it.
  std::thread chief([&] {
    EXPECT_TRUE(WaitUntil(
        [&] {
          auto st = fleet_->client(0)->GetStatus(std::chrono::seconds(1));
          return st.ok() && st->global_step() >= 20;
        },
        std::chrono::minutes(5)));
    PS_EXPECT_OK(fleet_->client(0)->EndTraining("target reached"));
  });
  Trainer trainer(model_.get(), fleet_.get(), input.get(), &heartbeat, &stop_, options);
  auto result = trainer.Run();
  chief.join();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_GE(result->local_steps, 20);
  EXPECT_LT(result->local_steps, 100000);
  EXPECT_EQ(heartbeat.training_ended(), "target reached");
}

TEST_F(TrainerTest, StopNoticeEndsARunWithoutEnd) {
  auto input = Input(/*epochs=*/0);
  ASSERT_NE(input, nullptr);
  stop_.Notify("test");
  Trainer trainer(model_.get(), fleet_.get(), input.get(), nullptr, &stop_, TrainerOptions{});
  auto result = trainer.Run();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_LE(result->local_steps, 1);
}

// Two dense layers (so a step's transfers have layers to overlap with),
// their variables over two in-process ps tasks, hidden/weights cut in two.
class TwoLayerTrainerTest : public TrainerTest {
 protected:
  void SetUp() override {
    TrainerTest::SetUp();  // the images
    auto spec = nn::ParseModelSpec(R"pbtxt(
      name: "two" input_shape: [4, 4, 1] num_classes: 10
      layer { name: "flat" flatten {} }
      layer { name: "hidden" dense { units: 32 relu: true
                                     weights_initializer { truncated_normal_stddev: 0.1 }
                                     biases_initializer { constant: 0.1 } } }
      layer { name: "logits" dense { units: 10
                                     weights_initializer { truncated_normal_stddev: 0.1 }
                                     biases_initializer { constant: 0 } } }
    )pbtxt",
                                   "the two-layer net");
    ASSERT_TRUE(spec.ok()) << spec.status().ToString();
    auto model = nn::CreateModel(*spec);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    model_ = std::move(model).value();
    initial_.clear();
    for (const nn::VariableSpec& v : model_->variables()) {
      infos_.push_back({v.name, v.shape, 1});
      initial_.push_back(nn::InitialValue(v, /*seed=*/3));
    }
    // hidden/weights is 16 x 32 floats (2 KB with its slot): cut in two.
    auto placement =
        cluster::ComputePlacement(infos_, 2, cluster::PlacementStrategy::kGreedy, 1024);
    ASSERT_TRUE(placement.ok()) << placement.status().ToString();
    ASSERT_EQ(placement->ShardsOfVariable("hidden/weights").size(), 2u);
    placement_ = *placement;
  }

  // A fresh pair of ps tasks, initialized (Nesterov momentum).
  std::unique_ptr<PsFleet> NewFleet() {
    std::vector<std::unique_ptr<PsConnection>> ps;
    ps.push_back(std::make_unique<InProcessPs>(0));
    ps.push_back(std::make_unique<InProcessPs>(1));
    auto fleet = std::make_unique<PsFleet>(std::move(ps), infos_, placement_);
    proto::InitHeader header;
    header.mutable_optimizer()->set_name("Momentum");
    header.mutable_optimizer()->set_learning_rate(0.05f);
    header.mutable_optimizer()->set_momentum(0.9f);
    header.mutable_optimizer()->set_use_nesterov(true);
    header.set_num_workers(1);
    PS_EXPECT_OK(fleet->InitVariables(initial_, header));
    return fleet;
  }

  // Trains `epochs` epochs on a fresh pair of ps tasks with `options`, once
  // serially and once overlapped; each run's variables, or none when a run
  // fails (which the test reports).
  std::vector<std::vector<Tensor>> TrainBothWays(int64_t epochs, TrainerOptions options) {
    std::vector<std::vector<Tensor>> trained;
    for (bool overlap : {false, true}) {
      auto fleet = NewFleet();
      auto input = Input(epochs);
      if (input == nullptr) return {};
      options.overlap = overlap;
      options.log_frequency = 0;
      Trainer trainer(model_.get(), fleet.get(), input.get(), nullptr, &stop_, options);
      auto result = trainer.Run();
      EXPECT_TRUE(result.ok()) << result.status().ToString();
      if (!result.ok()) return {};
      EXPECT_EQ(result->global_step, epochs * 256 / 32);
      EXPECT_LT(result->last_loss, result->first_loss);
      trained.push_back(Variables(fleet.get()));
    }
    return trained;
  }

  std::vector<Tensor> Variables(PsFleet* fleet) {
    std::vector<Tensor> values;
    PsFleet::PsSteps steps;
    PS_EXPECT_OK(fleet->PullVariables(&values, &steps));
    return values;
  }

  std::vector<cluster::VariableInfo> infos_;
  cluster::Placement placement_;
};

void ExpectBitIdentical(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t v = 0; v < a.size(); ++v) {
    ASSERT_EQ(a[v].shape(), b[v].shape());
    EXPECT_EQ(std::memcmp(a[v].data(), b[v].data(), a[v].bytes()), 0) << "variable " << v;
  }
}

TEST_F(TwoLayerTrainerTest, OverlappedStepsLeaveExactlyWhatSerialStepsLeave) {
  TrainerOptions options;
  options.gradients.weight_decay["hidden/weights"] = 0.01f;
  options.gradients.clip_norm = 5.0f;
  auto trained = TrainBothWays(/*epochs=*/3, options);
  ASSERT_EQ(trained.size(), 2u);
  ExpectBitIdentical(trained[0], trained[1]);
}

TEST_F(TwoLayerTrainerTest, ClippingByGlobalNormWaitsForEveryGradientAndMatchesSerial) {
  TrainerOptions options;
  options.gradients.clip_global_norm = 0.05f;  // below the gradients' norm: every step scales
  auto trained = TrainBothWays(/*epochs=*/1, options);
  ASSERT_EQ(trained.size(), 2u);
  ExpectBitIdentical(trained[0], trained[1]);
}

TEST_F(TwoLayerTrainerTest, AStepWithANonFiniteGradientPushesNothingToAnyPs) {
  for (bool overlap : {false, true}) {
    auto fleet = NewFleet();
    auto input = Input(/*epochs=*/1);
    ASSERT_NE(input, nullptr);
    TrainerOptions options;
    options.overlap = overlap;
    // hidden/weights' gradient becomes Inf; logits', computed and sent
    // before it in backward order, must not be applied either.
    options.gradients.multipliers["hidden/weights"] = std::numeric_limits<float>::infinity();
    Trainer trainer(model_.get(), fleet.get(), input.get(), nullptr, &stop_, options);
    auto result = trainer.Run();
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), Code::kInvalidArgument) << result.status().ToString();
    EXPECT_NE(result.status().message().find("hidden/weights"), std::string::npos);
    auto status = fleet->CoordinatorStatus();
    PS_ASSERT_OK(status);
    EXPECT_EQ(status->global_step(), 0) << "overlap " << overlap;
    ExpectBitIdentical(Variables(fleet.get()), initial_);
  }
}

}  // namespace
}  // namespace pstrain
