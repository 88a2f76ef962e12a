#include "nn/cpu/softmax_xent.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/testing/status_assertions.h"
#include "nn/grad_check.h"

namespace pstrain {
namespace nn {
namespace cpu {
namespace {

TEST(SoftmaxCrossEntropy, UniformLogitsGiveLogC) {
  Tensor logits({2, 4});
  auto loss = SoftmaxCrossEntropy(logits, {0, 3}, nullptr);
  PS_ASSERT_OK(loss);
  EXPECT_NEAR(*loss, std::log(4.0f), 1e-6);
}

TEST(SoftmaxCrossEntropy, StableForLargeLogits) {
  Tensor logits({1, 3}, {1000.0f, 0.0f, -1000.0f});
  Tensor grad;
  auto loss = SoftmaxCrossEntropy(logits, {1}, &grad);
  PS_ASSERT_OK(loss);
  EXPECT_NEAR(*loss, 1000.0f, 1e-3);
  EXPECT_NEAR(grad[0], 1.0f, 1e-6);
  EXPECT_NEAR(grad[1], -1.0f, 1e-6);
  EXPECT_NEAR(grad[2], 0.0f, 1e-6);
}

TEST(SoftmaxCrossEntropy, GradientMatchesNumerical) {
  std::mt19937 rng(8);
  Tensor logits = RandomTensor({5, 7}, &rng, -3.0f, 3.0f);
  std::vector<int32_t> labels = {0, 6, 3, 3, 1};
  Tensor grad;
  PS_ASSERT_OK(SoftmaxCrossEntropy(logits, labels, &grad));
  auto loss = [&] { return static_cast<double>(*SoftmaxCrossEntropy(logits, labels, nullptr)); };
  GradCheckOptions options;
  options.eps = 1e-2;
  options.atol = 2e-4;
  ExpectGradientMatches("logits", &logits, grad, loss, options);
}

TEST(SoftmaxCrossEntropy, RejectsBadLabelsAndShapes) {
  Tensor logits({2, 3});
  EXPECT_EQ(SoftmaxCrossEntropy(logits, {0, 3}, nullptr).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(SoftmaxCrossEntropy(logits, {-1, 0}, nullptr).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(SoftmaxCrossEntropy(logits, {0}, nullptr).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(SoftmaxCrossEntropy(Tensor({6}), {0}, nullptr).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
