#include "ps/dense_variables.h"

#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <vector>

#include "core/testing/status_assertions.h"
#include "ps/update_rules.h"

namespace pstrain {
namespace {

std::unique_ptr<Optimizer> Sgd(float lr) {
  proto::OptimizerConfig o;
  o.set_name("GradientDescent");
  o.set_learning_rate(lr);
  auto opt = Optimizer::Create(o);
  EXPECT_TRUE(opt.ok()) << opt.status().ToString();
  return std::move(opt).value();
}

TEST(DenseVariables, AShadowAndAVariableUpdatedFromManyThreadsLoseNothing) {
  DenseVariables::Options options;
  options.ema_decay = 0.5f;
  auto vars = DenseVariables::Make(options, Sgd(1.0f), {{"w", Tensor({2}, {0, 0})}}, {});
  PS_ASSERT_OK(vars.status());
  const std::map<std::string, Tensor> grad = {{"w", Tensor({2}, {-1, -1})}};
  constexpr int kThreads = 4, kPushes = 100;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int p = 0; p < kPushes; ++p) {
        auto work = (*vars)->Resolve(grad);
        PS_ASSERT_OK(work.status());
        (*vars)->Apply(*work, 1.0f, 1000);  // decay min(0.5, 1001/1010) = 0.5
      }
    });
  }
  // Reads beside the updates.
  for (int r = 0; r < 50; ++r) EXPECT_EQ((*vars)->ReadState().size(), 2u);
  for (std::thread& t : threads) t.join();
  const auto state = (*vars)->ReadState();
  ASSERT_EQ(state.size(), 2u);
  EXPECT_EQ(state[0].first, "w");
  EXPECT_FLOAT_EQ(state[0].second.data()[0], kThreads * kPushes);
  EXPECT_EQ(state[1].first, "w/ExponentialMovingAverage");
  // The shadow halves its distance to the value at each update: after
  // n updates it trails value n by about 1.
  EXPECT_NEAR(state[1].second.data()[0], kThreads * kPushes - 1, 1e-3);
}

TEST(DenseVariables, SavedSlotsAndShadowsComeBackAndStrangersAreRefused) {
  DenseVariables::Options options;
  options.ema_decay = 0.9f;
  proto::OptimizerConfig o;
  o.set_name("Momentum");
  o.set_learning_rate(0.1f);
  o.set_momentum(0.9f);
  auto momentum = [&] { return std::move(Optimizer::Create(o)).value(); };
  auto vars = DenseVariables::Make(
      options, momentum(), {{"w", Tensor({1}, {1})}},
      {{"w/Momentum", Tensor({1}, {7})}, {"w/ExponentialMovingAverage", Tensor({1}, {3})}});
  PS_ASSERT_OK(vars.status());
  const auto state = (*vars)->ReadState();
  ASSERT_EQ(state.size(), 3u);
  EXPECT_FLOAT_EQ(state[1].second.data()[0], 7);
  EXPECT_FLOAT_EQ(state[2].second.data()[0], 3);
  PS_EXPECT_CODE(DenseVariables::Make(options, momentum(), {{"w", Tensor({1}, {1})}},
                                      {{"w/ExponentialMovingAverage", Tensor({2}, {3, 3})}})
                     .status(),
                 Code::kInvalidArgument);
  PS_EXPECT_CODE(DenseVariables::Make(options, momentum(), {{"w", Tensor({1}, {1})}},
                                      {{"v/Momentum", Tensor({1}, {3})}})
                     .status(),
                 Code::kInvalidArgument);
}

// An update that also writes its variable elsewhere (a worker's arena)
// gives the same bits as one that does not, and the copy is the value
// after it: a variable large enough to be updated in halves and in
// blocks, with Nesterov momentum and a shadow, and a non-trainable one.
TEST(DenseVariables, AnUpdateCopiedOutLeavesTheSameValueInBothPlaces) {
  proto::OptimizerConfig o;
  o.set_name("Momentum");
  o.set_learning_rate(0.05f);
  o.set_momentum(0.9f);
  o.set_use_nesterov(true);
  DenseVariables::Options options;
  options.ema_decay = 0.99f;
  options.non_trainable = {"mean"};
  constexpr int64_t kBig = (int64_t{1} << 21) + 12345;  // past kSplitElements, blocks uneven
  Tensor w({kBig}), mean({100});
  for (int64_t i = 0; i < kBig; ++i) w[i] = static_cast<float>(i % 977) * 1e-3f - 0.4f;
  mean.Fill(0.5f);
  std::map<std::string, Tensor> grads = {{"w", Tensor({kBig})}, {"mean", Tensor({100})}};
  for (int64_t i = 0; i < kBig; ++i) grads["w"][i] = static_cast<float>(i % 31) * 0.01f - 0.15f;
  grads["mean"].Fill(0.25f);
  auto make = [&] {
    auto made = DenseVariables::Make(options, std::move(Optimizer::Create(o)).value(),
                                     {{"w", w}, {"mean", mean}}, {});
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    return std::move(made).value();
  };
  auto plain = make();
  auto copied = make();
  std::vector<float> w_copy(kBig, -1.0f), mean_copy(100, -1.0f);
  for (int push = 1; push <= 3; ++push) {
    auto work = plain->Resolve(grads);
    PS_ASSERT_OK(work.status());
    plain->Apply(*work, 0.05f, push);
    auto work_copied = copied->Resolve(grads, {{"w", w_copy.data()}, {"mean", mean_copy.data()}});
    PS_ASSERT_OK(work_copied.status());
    copied->Apply(*work_copied, 0.05f, push);
  }
  const auto want = plain->ReadState();
  const auto got = copied->ReadState();
  ASSERT_EQ(want.size(), got.size());
  for (size_t k = 0; k < want.size(); ++k) {
    ASSERT_EQ(want[k].first, got[k].first);
    ASSERT_EQ(std::memcmp(want[k].second.data(), got[k].second.data(), want[k].second.bytes()), 0)
        << want[k].first;
  }
  auto values = copied->ReadShared({"w", "mean"});
  PS_ASSERT_OK(values.status());
  EXPECT_EQ(std::memcmp(w_copy.data(), (*values)[0].second->data(), kBig * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(mean_copy.data(), (*values)[1].second->data(), 100 * sizeof(float)), 0);
  EXPECT_FLOAT_EQ(mean_copy[0], 0.5f - 3 * 0.25f);
}

}  // namespace
}  // namespace pstrain
