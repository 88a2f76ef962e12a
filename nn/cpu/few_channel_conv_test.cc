#include "nn/cpu/few_channel_conv.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "core/testing/status_assertions.h"
#include "nn/conv2d_shapes.h"
#include "nn/cpu/conv2d.h"
#include "nn/grad_check.h"
#include "nn/reference_ops.h"

namespace pstrain {
namespace nn {
namespace cpu {
namespace {

struct FewCase {
  const char* name;
  int64_t n, h, w, cin, cout, kernel, stride;
  Padding padding;
};

// mnist's and cifar10's first layers, strides with SAME's uneven padding,
// VALID windows that leave cells unread, rows shorter than the 6 pixels
// kept in registers, and a 7-wide kernel (two passes of taps).
const FewCase kCases[] = {
    {"mnist_conv1", 3, 28, 28, 1, 32, 5, 1, Padding::kSame},
    {"cifar10_conv1", 2, 24, 24, 3, 64, 5, 1, Padding::kSame},
    {"same_stride2_odd", 2, 9, 7, 2, 16, 3, 2, Padding::kSame},
    {"valid_stride2_unread", 2, 8, 10, 4, 16, 3, 2, Padding::kValid},
    {"narrow_rows", 1, 5, 3, 3, 48, 5, 1, Padding::kSame},
    {"kernel7_valid", 1, 11, 13, 1, 16, 7, 1, Padding::kValid},
};

Conv2DConfig ConfigOf(const FewCase& c) {
  return {c.kernel, c.kernel, c.cin, c.cout, c.stride, c.padding};
}

class FewChannelConv2DTest : public ::testing::TestWithParam<FewCase> {};

TEST_P(FewChannelConv2DTest, ForwardMatchesReference) {
  const FewCase& c = GetParam();
  ASSERT_TRUE(FewChannelConv2D::Supports(ConfigOf(c)));
  std::mt19937 rng(7);
  FewChannelConv2D conv(ConfigOf(c));
  Tensor x = RandomTensor({c.n, c.h, c.w, c.cin}, &rng);
  Tensor w = RandomTensor({c.kernel, c.kernel, c.cin, c.cout}, &rng);
  Tensor b = RandomTensor({c.cout}, &rng);
  Tensor y;
  PS_ASSERT_OK(conv.Forward(x, w, b, &y));
  ExpectCloseToScale("y", y, ReferenceConv2D(x, w, b, c.stride, c.padding == Padding::kSame), 1e-5);
}

// oneDNN's backward pass is checked against numerical gradients in
// conv2d_test.cc; at mnist's and cifar10's sizes one would take minutes.
TEST_P(FewChannelConv2DTest, BackwardMatchesOneDnn) {
  const FewCase& c = GetParam();
  std::mt19937 rng(11);
  FewChannelConv2D conv(ConfigOf(c));
  DnnlContext ctx;
  Conv2D direct(&ctx, ConfigOf(c));
  Tensor x = RandomTensor({c.n, c.h, c.w, c.cin}, &rng);
  Tensor w = RandomTensor({c.kernel, c.kernel, c.cin, c.cout}, &rng);
  Tensor dy = RandomTensor(direct.OutputShape(x.shape()), &rng);
  Tensor dx, dw, db, want_dx, want_dw, want_db;
  PS_ASSERT_OK(conv.Backward(x, w, dy, &dx, &dw, &db));
  PS_ASSERT_OK(direct.Backward(x, w, dy, &want_dx, &want_dw, &want_db));
  ExpectCloseToScale("dx", dx, want_dx, 1e-5);
  ExpectCloseToScale("dw", dw, want_dw, 1e-5);
  ExpectCloseToScale("db", db, want_db, 1e-5);
  // Without dx (as for a network's input), the same dw and db.
  Tensor dw_alone, db_alone;
  PS_ASSERT_OK(conv.Backward(x, w, dy, nullptr, &dw_alone, &db_alone));
  for (int64_t i = 0; i < dw.size(); ++i) ASSERT_EQ(dw_alone[i], dw[i]) << i;
  for (int64_t i = 0; i < db.size(); ++i) ASSERT_EQ(db_alone[i], db[i]) << i;
}

INSTANTIATE_TEST_SUITE_P(Cases, FewChannelConv2DTest, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(FewChannelConv2D, BackwardMatchesNumericalGradient) {
  std::mt19937 rng(13);
  const Conv2DConfig config{3, 3, 2, 16, 2, Padding::kSame};
  FewChannelConv2D conv(config);
  Tensor x = RandomTensor({2, 5, 4, 2}, &rng);
  Tensor w = RandomTensor({3, 3, 2, 16}, &rng);
  Tensor b = RandomTensor({16}, &rng);
  ExpectAffineGradientsMatch(&conv, &x, &w, &b, &rng);
}

TEST(FewChannelConv2D, SupportsFewInputsAndWholeVectorsOfOutputs) {
  EXPECT_TRUE(FewChannelConv2D::Supports({5, 5, 1, 32, 1, Padding::kSame}));
  EXPECT_TRUE(FewChannelConv2D::Supports({5, 5, 3, 64, 1, Padding::kSame}));
  EXPECT_TRUE(FewChannelConv2D::Supports({3, 3, 4, 16, 2, Padding::kValid}));
  EXPECT_FALSE(FewChannelConv2D::Supports({5, 5, 5, 32, 1, Padding::kSame}));  // too many inputs
  EXPECT_FALSE(FewChannelConv2D::Supports({5, 5, 1, 24, 1, Padding::kSame}));  // 24 outputs
}

// The shapes are CheckConv2DOperands' (conv2d_test.cc tests them); the kernel
// must ask it before it reads.
TEST(FewChannelConv2D, RejectsMismatchedShapes) {
  FewChannelConv2D conv({5, 5, 1, 16, 1, Padding::kSame});
  Tensor y, dx, dw, db;
  PS_EXPECT_CODE(conv.Forward(Tensor({1, 5, 5, 2}), Tensor({5, 5, 1, 16}), Tensor({16}), &y),
                 Code::kInvalidArgument);
  PS_EXPECT_CODE(conv.Backward(Tensor({1, 5, 5, 1}), Tensor({5, 5, 1, 16}), Tensor({1, 5, 4, 16}),
                               &dx, &dw, &db),
                 Code::kInvalidArgument);
}

}  // namespace
}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
