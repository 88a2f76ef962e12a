#include "nn/cpu/lrn.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/testing/status_assertions.h"
#include "nn/grad_check.h"

namespace pstrain {
namespace nn {
namespace cpu {
namespace {

// TF's definition, term by term in double.
Tensor ReferenceLrn(const Tensor& x, const LrnConfig& c) {
  Tensor y(x.shape());
  const int64_t channels = x.dim(3);
  for (int64_t p = 0; p < x.size() / channels; ++p) {
    for (int64_t k = 0; k < channels; ++k) {
      double sum = 0;
      for (int64_t j = std::max<int64_t>(0, k - c.depth_radius);
           j <= std::min(channels - 1, k + c.depth_radius); ++j) {
        sum += double(x[p * channels + j]) * x[p * channels + j];
      }
      y[p * channels + k] =
          static_cast<float>(x[p * channels + k] * std::pow(c.bias + c.alpha * sum, -c.beta));
    }
  }
  return y;
}

// cifar10's norm1: depth_radius 4, bias 1, alpha 0.001 / 9, beta 0.75.
LrnConfig Cifar10Lrn() { return {4, 1.0f, 0.001f / 9.0f, 0.75f}; }

TEST(Lrn, ForwardByHand) {
  // One pixel, channels 1, 2, 3, radius 1, bias 1, alpha 1, beta 0.5:
  // n = 1 + (1 + 4), 1 + (1 + 4 + 9), 1 + (4 + 9) = 6, 15, 14.
  Lrn lrn = *Lrn::Create({1, 1.0f, 1.0f, 0.5f});
  Tensor x({1, 1, 1, 3}, {1, 2, 3});
  Tensor y;
  PS_ASSERT_OK(lrn.Forward(x, &y));
  EXPECT_FLOAT_EQ(y[0], 1 / std::sqrt(6.0f));
  EXPECT_FLOAT_EQ(y[1], 2 / std::sqrt(15.0f));
  EXPECT_FLOAT_EQ(y[2], 3 / std::sqrt(14.0f));
}

TEST(Lrn, ForwardMatchesTheDefinition) {
  std::mt19937 rng(3);
  for (const LrnConfig& c : {Cifar10Lrn(), LrnConfig{0, 2.0f, 0.5f, 1.0f},
                             LrnConfig{2, 1.0f, 1e-4f, 0.75f}, LrnConfig{40, 0.5f, 0.3f, 0.6f}}) {
    Lrn lrn = *Lrn::Create(c);
    // Large and small values side by side: what leaves the sliding window
    // must not spoil the small sums after it.
    Tensor x = RandomTensor({2, 3, 5, 64}, &rng, -30.0f, 30.0f);
    for (int64_t i = 0; i < x.size(); i += 7) x[i] *= 1e-3f;
    Tensor y;
    PS_ASSERT_OK(lrn.Forward(x, &y));
    Tensor want = ReferenceLrn(x, c);
    for (int64_t i = 0; i < y.size(); ++i) {
      ASSERT_NEAR(y[i], want[i], 1e-5 * std::abs(want[i]) + 1e-7) << "at " << i;
    }
  }
}

TEST(Lrn, BackwardMatchesNumericalGradient) {
  std::mt19937 rng(4);
  for (const LrnConfig& c : {Cifar10Lrn(), LrnConfig{1, 1.0f, 0.8f, 0.5f},
                             LrnConfig{3, 2.0f, 0.1f, 1.3f}, LrnConfig{0, 1.0f, 1.0f, 0.75f}}) {
    Lrn lrn = *Lrn::Create(c);
    // Values around 3: with a large alpha the normalization bites hard.
    Tensor x = RandomTensor({2, 2, 3, 11}, &rng, -3.0f, 3.0f);
    Tensor r = RandomTensor(x.shape(), &rng);
    auto loss = [&] {
      Tensor y;
      PS_EXPECT_OK(lrn.Forward(x, &y));
      return Dot(y, r);
    };
    Tensor dx;
    PS_ASSERT_OK(lrn.Backward(x, r, &dx));
    ExpectGradientMatches("x", &x, dx, loss, {});
  }
}

TEST(Lrn, RefusesBadConfigAndShapes) {
  EXPECT_EQ(Lrn::Create({-1, 1, 1, 1}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Lrn::Create({2, 0, 1, 1}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Lrn::Create({2, 1, -1, 1}).status().code(), Code::kInvalidArgument);
  Lrn lrn = *Lrn::Create(Cifar10Lrn());
  Tensor y, dx;
  EXPECT_EQ(lrn.Forward(Tensor({4, 4}), &y).code(), Code::kInvalidArgument);
  EXPECT_EQ(lrn.Backward(Tensor({1, 2, 2, 3}), Tensor({1, 2, 2, 4}), &dx).code(),
            Code::kInvalidArgument);
}

}  // namespace
}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
