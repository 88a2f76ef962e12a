#include "nn/cpu/dense.h"

#include <gtest/gtest.h>

#include <random>

#include "core/testing/status_assertions.h"
#include "nn/grad_check.h"
#include "nn/reference_ops.h"

namespace pstrain {
namespace nn {
namespace cpu {
namespace {

TEST(Dense, ForwardMatchesReference) {
  DnnlContext ctx;
  std::mt19937 rng(2);
  Dense dense(&ctx, 12, 5);
  Tensor x = RandomTensor({3, 12}, &rng);
  Tensor w = RandomTensor({12, 5}, &rng);
  Tensor b = RandomTensor({5}, &rng);
  Tensor y;
  PS_ASSERT_OK(dense.Forward(x, w, b, &y));
  Tensor want = ReferenceDense(x, w, b);
  ASSERT_EQ(y.shape(), want.shape());
  for (int64_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-5) << "at " << i;
}

TEST(Dense, FlattensItsInputRowMajor) {
  DnnlContext ctx;
  std::mt19937 rng(3);
  Dense dense(&ctx, 2 * 3 * 4, 3);
  Tensor x = RandomTensor({2, 2, 3, 4}, &rng);
  Tensor w = RandomTensor({24, 3}, &rng);
  Tensor b = RandomTensor({3}, &rng);
  Tensor y;
  PS_ASSERT_OK(dense.Forward(x, w, b, &y));
  Tensor flat = x;
  flat.Reshape({2, 24});
  Tensor want = ReferenceDense(flat, w, b);
  for (int64_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-5) << "at " << i;
}

TEST(Dense, BackwardMatchesNumericalGradient) {
  DnnlContext ctx;
  std::mt19937 rng(4);
  Dense dense(&ctx, 7, 5);
  Tensor x = RandomTensor({4, 7}, &rng);
  Tensor w = RandomTensor({7, 5}, &rng);
  Tensor b = RandomTensor({5}, &rng);
  Tensor r = RandomTensor({4, 5}, &rng);
  auto loss = [&] {
    Tensor y;
    PS_EXPECT_OK(dense.Forward(x, w, b, &y));
    return Dot(y, r);
  };
  Tensor dx, dw, db;
  PS_ASSERT_OK(dense.Backward(x, w, r, &dx, &dw, &db));
  ExpectGradientMatches("x", &x, dx, loss, {});
  ExpectGradientMatches("w", &w, dw, loss, {});
  ExpectGradientMatches("b", &b, db, loss, {});
}

TEST(Dense, RejectsMismatchedShapes) {
  DnnlContext ctx;
  Dense dense(&ctx, 6, 2);
  Tensor y, dx, dw, db;
  EXPECT_EQ(dense.Forward(Tensor({3, 5}), Tensor({6, 2}), Tensor({2}), &y).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(dense.Forward(Tensor({3, 6}), Tensor({2, 6}), Tensor({2}), &y).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(dense.Forward(Tensor({3, 6}), Tensor({6, 2}), Tensor({6}), &y).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(dense.Backward(Tensor({3, 6}), Tensor({6, 2}), Tensor({2, 2}), &dx, &dw, &db).code(),
            Code::kInvalidArgument);
}

}  // namespace
}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
