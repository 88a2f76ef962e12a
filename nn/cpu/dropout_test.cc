#include "nn/cpu/dropout.h"

#include <gtest/gtest.h>

#include <random>

#include "core/testing/status_assertions.h"
#include "nn/grad_check.h"

namespace pstrain {
namespace nn {
namespace cpu {
namespace {

TEST(Dropout, KeepsAboutKeepProbScaledAndRepeatsWithTheSeed) {
  Dropout a = *Dropout::Create(0.25f, 9), b = *Dropout::Create(0.25f, 9);
  Tensor x({100000});
  x.Fill(2.0f);
  Tensor ya, yb;
  a.Forward(x, &ya);
  b.Forward(x, &yb);
  int64_t kept = 0;
  for (int64_t i = 0; i < x.size(); ++i) {
    ASSERT_TRUE(ya[i] == 0.0f || ya[i] == 8.0f) << ya[i];  // 2 / 0.25
    ASSERT_EQ(ya[i], yb[i]) << "the same seed draws the same mask";
    kept += ya[i] != 0.0f;
  }
  EXPECT_NEAR(kept / 100000.0, 0.25, 0.01);
  Tensor again;
  a.Forward(x, &again);
  int64_t same = 0;
  for (int64_t i = 0; i < x.size(); ++i) same += (again[i] != 0) == (ya[i] != 0);
  EXPECT_LT(same, 70000) << "each call draws a new mask";
}

TEST(Dropout, BackwardIsTheSameMask) {
  std::mt19937 rng(10);
  Dropout d = *Dropout::Create(0.6f, 3);
  Tensor x = RandomTensor({4, 33}, &rng), y;
  d.Forward(x, &y);
  Tensor dy = RandomTensor(x.shape(), &rng), dx;
  PS_ASSERT_OK(d.Backward(dy, &dx));
  for (int64_t i = 0; i < x.size(); ++i) {
    const float m = y[i] / x[i];  // 0 or 1 / 0.6
    EXPECT_NEAR(dx[i], dy[i] * m, 1e-6f) << i;
  }
  EXPECT_EQ(d.Backward(Tensor({3}), &dx).code(), Code::kFailedPrecondition);
}

TEST(Dropout, RefusesKeepProbOutsideZeroOne) {
  EXPECT_EQ(Dropout::Create(0.0f, 1).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Dropout::Create(1.5f, 1).status().code(), Code::kInvalidArgument);
  PS_EXPECT_OK(Dropout::Create(1.0f, 1));
}

}  // namespace
}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
