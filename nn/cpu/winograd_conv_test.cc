#include "nn/cpu/winograd_conv.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "core/testing/status_assertions.h"
#include "nn/cpu/conv2d.h"
#include "nn/grad_check.h"
#include "nn/reference_ops.h"

namespace pstrain {
namespace nn {
namespace cpu {
namespace {

struct WinoCase {
  const char* name;
  int64_t n, h, w, cin, cout;
};

// cifar10's and mnist's second layers, odd sizes whose last tiles are cut
// short, channel counts that fill no vector, and images smaller than a tile.
const WinoCase kCases[] = {
    {"cifar10_conv2", 2, 12, 12, 64, 64}, {"mnist_conv2", 1, 14, 14, 32, 64},
    {"odd_sizes", 3, 7, 5, 17, 19},       {"tiny_image", 2, 1, 3, 16, 5},
    {"one_column", 1, 6, 1, 24, 40},
};

Conv2DConfig ConfigOf(const WinoCase& c) { return {5, 5, c.cin, c.cout, 1, Padding::kSame}; }

class WinogradConv2DTest : public ::testing::TestWithParam<std::tuple<WinoCase, GemmPath>> {
 protected:
  void SetUp() override {
    const GemmPath path = std::get<1>(GetParam());
    if (!SmallGemmSupports(path)) GTEST_SKIP() << "this CPU cannot run " << GemmPathName(path);
  }
};

TEST_P(WinogradConv2DTest, ForwardMatchesReference) {
  const WinoCase& c = std::get<0>(GetParam());
  std::mt19937 rng(7);
  WinogradConv2D conv(ConfigOf(c), std::get<1>(GetParam()));
  Tensor x = RandomTensor({c.n, c.h, c.w, c.cin}, &rng);
  Tensor w = RandomTensor({5, 5, c.cin, c.cout}, &rng);
  Tensor b = RandomTensor({c.cout}, &rng);
  Tensor y;
  PS_ASSERT_OK(conv.Forward(x, w, b, &y));
  ExpectCloseToScale("y", y, ReferenceConv2D(x, w, b, 1, /*same=*/true), 2e-5);
}

// The oneDNN kernel's backward pass is checked against numerical gradients
// in conv2d_test.cc; at these sizes a numerical gradient would take minutes.
TEST_P(WinogradConv2DTest, BackwardMatchesTheDirectKernel) {
  const WinoCase& c = std::get<0>(GetParam());
  std::mt19937 rng(11);
  WinogradConv2D conv(ConfigOf(c), std::get<1>(GetParam()));
  DnnlContext ctx;
  Conv2D direct(&ctx, ConfigOf(c));
  Tensor x = RandomTensor({c.n, c.h, c.w, c.cin}, &rng);
  Tensor w = RandomTensor({5, 5, c.cin, c.cout}, &rng);
  Tensor dy = RandomTensor({c.n, c.h, c.w, c.cout}, &rng);
  Tensor dx, dw, db, want_dx, want_dw, want_db;
  PS_ASSERT_OK(conv.Backward(x, w, dy, &dx, &dw, &db));
  PS_ASSERT_OK(direct.Backward(x, w, dy, &want_dx, &want_dw, &want_db));
  ExpectCloseToScale("dx", dx, want_dx, 2e-5);
  ExpectCloseToScale("dw", dw, want_dw, 2e-5);
  ExpectCloseToScale("db", db, want_db, 2e-6);
  // Without dx (as for a network's input), the same dw and db.
  Tensor dw_alone, db_alone;
  PS_ASSERT_OK(conv.Backward(x, w, dy, nullptr, &dw_alone, &db_alone));
  for (int64_t i = 0; i < dw.size(); ++i) ASSERT_EQ(dw_alone[i], dw[i]) << i;
  for (int64_t i = 0; i < db.size(); ++i) ASSERT_EQ(db_alone[i], db[i]) << i;
}

INSTANTIATE_TEST_SUITE_P(Cases, WinogradConv2DTest,
                         ::testing::Combine(::testing::ValuesIn(kCases),
                                            ::testing::Values(GemmPath::kAvx512, GemmPath::kAvx2,
                                                              GemmPath::kPortable)),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param).name) + "_" +
                                  GemmPathName(std::get<1>(info.param));
                         });

TEST(WinogradConv2D, BackwardMatchesNumericalGradient) {
  std::mt19937 rng(13);
  const Conv2DConfig config{5, 5, 16, 3, 1, Padding::kSame};
  WinogradConv2D conv(config);
  Tensor x = RandomTensor({1, 5, 4, 16}, &rng);
  Tensor w = RandomTensor({5, 5, 16, 3}, &rng);
  Tensor b = RandomTensor({3}, &rng);
  ExpectAffineGradientsMatch(&conv, &x, &w, &b, &rng);
}

TEST(WinogradConv2D, SupportsOnlyWhatItComputesAndWins) {
  EXPECT_TRUE(WinogradConv2D::Supports({5, 5, 64, 64, 1, Padding::kSame}));
  EXPECT_TRUE(WinogradConv2D::Supports({5, 5, 32, 64, 1, Padding::kSame}));
  EXPECT_FALSE(WinogradConv2D::Supports({5, 5, 3, 64, 1, Padding::kSame}));   // too few inputs
  EXPECT_FALSE(WinogradConv2D::Supports({3, 3, 64, 64, 1, Padding::kSame}));  // not 5x5
  EXPECT_FALSE(WinogradConv2D::Supports({5, 5, 64, 64, 2, Padding::kSame}));  // strided
  EXPECT_FALSE(WinogradConv2D::Supports({5, 5, 64, 64, 1, Padding::kValid}));
}

TEST(WinogradConv2D, RejectsMismatchedShapes) {
  WinogradConv2D conv({5, 5, 16, 4, 1, Padding::kSame});
  Tensor y, dx, dw, db;
  EXPECT_EQ(conv.Forward(Tensor({1, 5, 5, 8}), Tensor({5, 5, 16, 4}), Tensor({4}), &y).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(conv.Forward(Tensor({1, 5, 5, 16}), Tensor({5, 5, 16, 4}), Tensor({3}), &y).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(conv.Backward(Tensor({1, 5, 5, 16}), Tensor({5, 5, 16, 4}), Tensor({1, 5, 4, 4}), &dx,
                          &dw, &db)
                .code(),
            Code::kInvalidArgument);
}

}  // namespace
}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
