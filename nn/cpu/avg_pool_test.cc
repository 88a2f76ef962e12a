#include "nn/cpu/avg_pool.h"

#include <gtest/gtest.h>

#include <random>

#include "core/testing/status_assertions.h"
#include "nn/grad_check.h"

namespace pstrain {
namespace nn {
namespace cpu {
namespace {

// TF's SAME average pool counts only the real cells of each window.
TEST(AvgPool, SamePaddingDividesByRealCells) {
  // One 3x3 image, one channel, 2x2 windows, stride 2, SAME: out 2x2, the
  // padding (1 cell) after, so the windows hold 4, 2, 2 and 1 real cells.
  Tensor x({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor y;
  PS_ASSERT_OK(AvgPool({2, 2, Padding::kSame}).Forward(x, &y));
  ASSERT_EQ(y.shape(), (Shape{1, 2, 2, 1}));
  EXPECT_FLOAT_EQ(y[0], (1 + 2 + 4 + 5) / 4.0f);
  EXPECT_FLOAT_EQ(y[1], (3 + 6) / 2.0f);
  EXPECT_FLOAT_EQ(y[2], (7 + 8) / 2.0f);
  EXPECT_FLOAT_EQ(y[3], 9.0f);
  Tensor dx;
  ASSERT_TRUE(AvgPool({2, 2, Padding::kSame})
                  .Backward(x.shape(), Tensor({1, 2, 2, 1}, {4, 2, 2, 1}), &dx)
                  .ok());
  // Each dy spreads evenly over its real cells: 1 each everywhere.
  for (int i = 0; i < 9; ++i) EXPECT_FLOAT_EQ(dx[i], 1.0f) << i;
}

TEST(AvgPool, BackwardMatchesNumericalGradient) {
  std::mt19937 rng(8);
  for (const PoolConfig& c : {PoolConfig{3, 2, Padding::kSame}, PoolConfig{2, 1, Padding::kValid},
                              PoolConfig{3, 3, Padding::kSame}}) {
    AvgPool pool(c);
    Tensor x = RandomTensor({2, 7, 5, 3}, &rng);
    Tensor y;
    PS_ASSERT_OK(pool.Forward(x, &y));
    Tensor r = RandomTensor(y.shape(), &rng);
    auto loss = [&] {
      Tensor out;
      PS_EXPECT_OK(pool.Forward(x, &out));
      return Dot(out, r);
    };
    Tensor dx;
    PS_ASSERT_OK(pool.Backward(x.shape(), r, &dx));
    ExpectGradientMatches("x", &x, dx, loss, {});
  }
}

TEST(AvgPool, RefusesBadShapes) {
  AvgPool pool({2, 2, Padding::kSame});
  Tensor y, dx;
  EXPECT_EQ(pool.Forward(Tensor({3, 3}), &y).code(), Code::kInvalidArgument);
  EXPECT_EQ(pool.Backward({1, 4, 4, 1}, Tensor({1, 3, 3, 1}), &dx).code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
