#include "nn/cpu/max_pool.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "core/testing/status_assertions.h"
#include "nn/grad_check.h"
#include "nn/reference_ops.h"

namespace pstrain {
namespace nn {
namespace cpu {
namespace {

struct PoolCase {
  const char* name;
  int64_t n, h, w, c, window, stride;
  Padding padding;
};

// Odd sizes, so SAME pads after the input and padded cells could matter.
const PoolCase kCases[] = {
    {"same_2x2_odd", 2, 5, 7, 3, 2, 2, Padding::kSame},
    {"same_3x3_stride2", 2, 7, 6, 3, 3, 2, Padding::kSame},
    {"same_3x3_stride1", 1, 5, 5, 2, 3, 1, Padding::kSame},
    {"valid_2x2", 2, 5, 7, 3, 2, 2, Padding::kValid},
    {"valid_3x3_stride2", 2, 7, 6, 3, 3, 2, Padding::kValid},
    // More channels than a vector's lanes, and a tail.
    {"same_2x2_37_channels", 2, 6, 5, 37, 2, 2, Padding::kSame},
};

class MaxPoolTest : public ::testing::TestWithParam<PoolCase> {};

// Forward, and inference (which keeps no winners), alike.
TEST_P(MaxPoolTest, ForwardAndInferenceMatchTheReference) {
  const PoolCase& c = GetParam();
  std::mt19937 rng(5);
  MaxPool pool({c.window, c.stride, c.padding});
  // All negative: a padded cell that counted as 0 would win and show up.
  Tensor x = RandomTensor({c.n, c.h, c.w, c.c}, &rng, -2.0f, -1.0f);
  Tensor want = ReferenceMaxPool(x, c.window, c.stride, c.padding == Padding::kSame);
  for (const bool inference : {false, true}) {
    Tensor y;
    PS_ASSERT_OK(inference ? pool.Infer(x, &y) : pool.Forward(x, &y));
    ASSERT_EQ(y.shape(), want.shape());
    for (int64_t i = 0; i < y.size(); ++i) {
      ASSERT_EQ(y[i], want[i]) << (inference ? "inference" : "forward") << ", at " << i;
    }
  }
}

TEST_P(MaxPoolTest, BackwardMatchesNumericalGradient) {
  const PoolCase& c = GetParam();
  std::mt19937 rng(9);
  MaxPool pool({c.window, c.stride, c.padding});
  // Distinct values 0.1 apart (all negative): a 0.01 step never moves an
  // argmax, and a padded zero would steal gradient.
  Tensor x = DistinctTensor({c.n, c.h, c.w, c.c}, &rng, -30.0f, 0.1f);
  Tensor r = RandomTensor(pool.OutputShape(x.shape()), &rng);
  auto loss = [&] {
    Tensor y;
    PS_EXPECT_OK(pool.Forward(x, &y));
    return Dot(y, r);
  };
  Tensor y, dx;
  PS_ASSERT_OK(pool.Forward(x, &y));
  PS_ASSERT_OK(pool.Backward(x.shape(), r, &dx));
  ExpectGradientMatches("x", &x, dx, loss, {});
}

INSTANTIATE_TEST_SUITE_P(Cases, MaxPoolTest, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

// After a ReLU most windows hold equal zeros: the first cell in row order
// takes the gradient, on the tiled path (2x2, stride 2, over 4x4) and the
// overlapping one (3x3, stride 2, over 3x3) alike.
TEST(MaxPool, TiesGoToTheFirstCellInRowOrder) {
  struct Case {
    PoolConfig config;
    int64_t size;
  };
  for (const Case& c : {Case{{2, 2, Padding::kValid}, 4}, Case{{3, 2, Padding::kValid}, 3}}) {
    MaxPool pool(c.config);
    Tensor x({1, c.size, c.size, 2});  // zeros
    Tensor y, dx;
    PS_ASSERT_OK(pool.Forward(x, &y));
    Tensor dy(y.shape());
    dy.Fill(1.0f);
    PS_ASSERT_OK(pool.Backward(x.shape(), dy, &dx));
    for (int64_t r = 0; r < c.size; ++r) {
      for (int64_t q = 0; q < c.size; ++q) {
        // A window's first cell: its row and column are multiples of the
        // stride and the window fits.
        const bool first = r % 2 == 0 && q % 2 == 0 && r + c.config.window <= c.size &&
                           q + c.config.window <= c.size;
        for (int64_t k = 0; k < 2; ++k) {
          EXPECT_EQ(dx[(r * c.size + q) * 2 + k], first ? 1.0f : 0.0f)
              << "window " << c.config.window << ", cell " << r << "," << q;
        }
      }
    }
  }
}

// Windows of -inf only (and SAME's padded edges): each still names a real
// cell of its window, so every output's gradient lands inside the input,
// on the tiled path and the overlapping one.
TEST(MaxPool, WindowsOfMinusInfinityStillNameARealCell) {
  for (const PoolConfig& config : {PoolConfig{2, 2, Padding::kSame}, {3, 2, Padding::kSame}}) {
    MaxPool pool(config);
    Tensor x({2, 5, 5, 3});
    x.Fill(-std::numeric_limits<float>::infinity());
    Tensor y, dx;
    PS_ASSERT_OK(pool.Forward(x, &y));
    for (int64_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], x[0]) << "at " << i;
    Tensor dy(y.shape());
    dy.Fill(1.0f);
    PS_ASSERT_OK(pool.Backward(x.shape(), dy, &dx));
    double total = 0;
    for (int64_t i = 0; i < dx.size(); ++i) total += dx[i];
    EXPECT_EQ(total, static_cast<double>(dy.size())) << "window " << config.window;
  }
}

TEST(MaxPool, BackwardBeforeForwardFails) {
  MaxPool pool({2, 2, Padding::kSame});
  Tensor dx;
  EXPECT_EQ(pool.Backward({1, 4, 4, 1}, Tensor({1, 2, 2, 1}), &dx).code(),
            Code::kFailedPrecondition);
}

// Inference keeps no winners: a Backward after it alone has none to use,
// and one after a Forward uses the Forward's, not those of a later
// inference on other values of the same shape.
TEST(MaxPool, InferenceLeavesTheWinnersOfTheLastForward) {
  MaxPool pool({2, 2, Padding::kValid});
  Tensor y, dx;
  Tensor first({1, 2, 2, 1}), second({1, 2, 2, 1});
  first[3] = 1.0f;   // the last cell wins
  second[0] = 1.0f;  // the first would
  Tensor dy({1, 1, 1, 1});
  dy.Fill(1.0f);
  PS_ASSERT_OK(pool.Infer(first, &y));
  EXPECT_EQ(pool.Backward(first.shape(), dy, &dx).code(), Code::kFailedPrecondition);
  PS_ASSERT_OK(pool.Forward(first, &y));
  PS_ASSERT_OK(pool.Infer(second, &y));
  EXPECT_EQ(y[0], 1.0f);
  PS_ASSERT_OK(pool.Backward(first.shape(), dy, &dx));
  for (int64_t i = 0; i < dx.size(); ++i) EXPECT_EQ(dx[i], i == 3 ? 1.0f : 0.0f) << "at " << i;
}

TEST(MaxPool, RejectsBadShapes) {
  MaxPool pool({3, 1, Padding::kValid});
  Tensor y, dx;
  EXPECT_EQ(pool.Forward(Tensor({1, 2, 4, 1}), &y).code(), Code::kInvalidArgument);
  EXPECT_EQ(pool.Forward(Tensor({4, 4, 1}), &y).code(), Code::kInvalidArgument);
  EXPECT_EQ(pool.Infer(Tensor({1, 2, 4, 1}), &y).code(), Code::kInvalidArgument);
  PS_ASSERT_OK(pool.Forward(Tensor({1, 4, 4, 1}), &y));
  EXPECT_EQ(pool.Backward({1, 4, 4, 1}, Tensor({1, 3, 2, 1}), &dx).code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
