#include "nn/cpu/relu.h"

#include <gtest/gtest.h>

#include <random>

#include "nn/grad_check.h"

namespace pstrain {
namespace nn {
namespace cpu {
namespace {

TEST(Relu, ForwardClampsNegatives) {
  Tensor x({5}, {-2.0f, -0.0f, 0.0f, 0.5f, 3.0f});
  Tensor y;
  ReluForward(x, &y);
  std::vector<float> want = {0.0f, 0.0f, 0.0f, 0.5f, 3.0f};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(y[i], want[i]) << "at " << i;
  ReluForward(x, &x);  // in place
  for (int i = 0; i < 5; ++i) EXPECT_EQ(x[i], want[i]) << "at " << i;
}

TEST(Relu, BackwardMatchesNumericalGradient) {
  std::mt19937 rng(6);
  // Keep |x| >= 0.1 so a 0.01 step never crosses the kink at 0.
  Tensor x = RandomTensor({3, 17}, &rng, 0.1f, 1.0f);
  for (int64_t i = 0; i < x.size(); i += 2) x[i] = -x[i];
  Tensor r = RandomTensor(x.shape(), &rng);
  auto loss = [&] {
    Tensor y;
    ReluForward(x, &y);
    return Dot(y, r);
  };
  Tensor y, dx;
  ReluForward(x, &y);
  ReluBackward(y, r, &dx);
  ExpectGradientMatches("x", &x, dx, loss, {});
}

TEST(Relu, BackwardInPlaceAndZeroAtZero) {
  Tensor y({3}, {0.0f, 2.0f, 0.0f});
  Tensor g({3}, {1.0f, 1.0f, 1.0f});
  ReluBackward(y, g, &g);
  EXPECT_EQ(g[0], 0.0f);
  EXPECT_EQ(g[1], 1.0f);
  EXPECT_EQ(g[2], 0.0f);
}

}  // namespace
}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
