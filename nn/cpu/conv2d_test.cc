#include "nn/cpu/conv2d.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/testing/status_assertions.h"
#include "nn/grad_check.h"
#include "nn/reference_ops.h"

namespace pstrain {
namespace nn {
namespace cpu {
namespace {

struct ConvCase {
  const char* name;
  int64_t n, h, w, cin, cout, kernel, stride;
  Padding padding;
};

// Odd and even sizes so SAME needs asymmetric padding (more after).
const ConvCase kCases[] = {
    {"same_stride1", 2, 5, 6, 3, 4, 3, 1, Padding::kSame},
    {"same_stride1_k5", 1, 6, 5, 2, 3, 5, 1, Padding::kSame},
    {"same_stride2_odd", 2, 7, 5, 3, 4, 3, 2, Padding::kSame},
    {"same_stride2_even_k5", 1, 8, 6, 2, 3, 5, 2, Padding::kSame},
    {"valid_stride1", 2, 6, 7, 2, 3, 3, 1, Padding::kValid},
    {"valid_stride2", 2, 7, 8, 2, 3, 3, 2, Padding::kValid},
};

class Conv2DTest : public ::testing::TestWithParam<ConvCase> {
 protected:
  DnnlContext ctx_;
};

TEST_P(Conv2DTest, ForwardMatchesReference) {
  const ConvCase& c = GetParam();
  std::mt19937 rng(7);
  Conv2D conv(&ctx_, {c.kernel, c.kernel, c.cin, c.cout, c.stride, c.padding});
  Tensor x = RandomTensor({c.n, c.h, c.w, c.cin}, &rng);
  Tensor w = RandomTensor({c.kernel, c.kernel, c.cin, c.cout}, &rng);
  Tensor b = RandomTensor({c.cout}, &rng);
  Tensor y;
  PS_ASSERT_OK(conv.Forward(x, w, b, &y));
  Tensor want = ReferenceConv2D(x, w, b, c.stride, c.padding == Padding::kSame);
  ASSERT_EQ(y.shape(), want.shape());
  for (int64_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], want[i], 1e-4) << "at " << i;
}

TEST_P(Conv2DTest, BackwardMatchesNumericalGradient) {
  const ConvCase& c = GetParam();
  std::mt19937 rng(11);
  Conv2D conv(&ctx_, {c.kernel, c.kernel, c.cin, c.cout, c.stride, c.padding});
  Tensor x = RandomTensor({c.n, c.h, c.w, c.cin}, &rng);
  Tensor w = RandomTensor({c.kernel, c.kernel, c.cin, c.cout}, &rng);
  Tensor b = RandomTensor({c.cout}, &rng);
  Tensor r = RandomTensor(conv.OutputShape(x.shape()), &rng);
  auto loss = [&] {
    Tensor y;
    PS_EXPECT_OK(conv.Forward(x, w, b, &y));
    return Dot(y, r);
  };
  Tensor dx, dw, db;
  PS_ASSERT_OK(conv.Backward(x, w, r, &dx, &dw, &db));
  ExpectGradientMatches("x", &x, dx, loss, {});
  ExpectGradientMatches("w", &w, dw, loss, {});
  ExpectGradientMatches("b", &b, db, loss, {});
}

INSTANTIATE_TEST_SUITE_P(Cases, Conv2DTest, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Conv2D, BackwardWithoutInputGradient) {
  DnnlContext ctx;
  std::mt19937 rng(3);
  Conv2D conv(&ctx, {3, 3, 2, 4, 1, Padding::kSame});
  Tensor x = RandomTensor({2, 5, 5, 2}, &rng);
  Tensor w = RandomTensor({3, 3, 2, 4}, &rng);
  Tensor dy = RandomTensor({2, 5, 5, 4}, &rng);
  Tensor dx_full, dw_full, db_full, dw, db;
  PS_ASSERT_OK(conv.Backward(x, w, dy, &dx_full, &dw_full, &db_full));
  PS_ASSERT_OK(conv.Backward(x, w, dy, nullptr, &dw, &db));
  for (int64_t i = 0; i < dw.size(); ++i) EXPECT_EQ(dw[i], dw_full[i]);
  for (int64_t i = 0; i < db.size(); ++i) EXPECT_EQ(db[i], db_full[i]);
}

TEST(Conv2D, RejectsMismatchedShapes) {
  DnnlContext ctx;
  Conv2D conv(&ctx, {3, 3, 2, 4, 1, Padding::kSame});
  Tensor y;
  EXPECT_EQ(conv.Forward(Tensor({1, 5, 5, 3}), Tensor({3, 3, 2, 4}), Tensor({4}), &y).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(conv.Forward(Tensor({1, 5, 5, 2}), Tensor({3, 3, 4, 2}), Tensor({4}), &y).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(conv.Forward(Tensor({1, 5, 5, 2}), Tensor({3, 3, 2, 4}), Tensor({3}), &y).code(),
            Code::kInvalidArgument);
  Conv2D valid(&ctx, {3, 3, 2, 4, 1, Padding::kValid});
  EXPECT_EQ(valid.Forward(Tensor({1, 2, 5, 2}), Tensor({3, 3, 2, 4}), Tensor({4}), &y).code(),
            Code::kInvalidArgument);
}

}  // namespace
}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
