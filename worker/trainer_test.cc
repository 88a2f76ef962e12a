// Trainer against an in-process ps (ps/in_process_ps.h): a real model, a
// real input pipeline over images in memory, the real ps logic; no network.
// Whole clusters of processes: tests/integration/.
#include "worker/trainer.h"

#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "data/input_pipeline.h"
#include "nn/model_spec.h"
#include "nn/test_models.h"
#include "ps/in_process_ps.h"

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
    auto placement = cluster::ComputePlacement(infos, 1, cluster::PlacementStrategy::kGreedy,
                                               1 << 20);
    ASSERT_TRUE(placement.ok());
    std::vector<std::unique_ptr<PsConnection>> ps;
    ps.push_back(std::make_unique<InProcessPs>(0));
    fleet_ = std::make_unique<PsFleet>(std::move(ps), infos, *placement);
    proto::InitHeader header;
    header.mutable_optimizer()->set_name("GradientDescent");
    header.mutable_optimizer()->set_learning_rate(0.1f);
    header.set_num_workers(1);
    ASSERT_TRUE(fleet_->InitVariables(initial_, header).ok());

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
  ASSERT_TRUE(fleet_->PullVariables(&values, &steps).ok());
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
    for (;;) {
      auto st = fleet_->client(0)->GetStatus(std::chrono::seconds(1));
      if (st.ok() && st->global_step() >= 20) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_TRUE(fleet_->client(0)->EndTraining("target reached").ok());
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

}  // namespace
}  // namespace pstrain
