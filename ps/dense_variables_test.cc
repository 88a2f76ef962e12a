#include "ps/dense_variables.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace pstrain
