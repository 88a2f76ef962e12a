#include "nn/cpu/batch_norm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/testing/status_assertions.h"
#include "nn/grad_check.h"

namespace pstrain {
namespace nn {
namespace cpu {
namespace {

// Training-mode gradients of sum(y * r) against central differences, for an
// NHWC input and an [N,F] input. The loss is smooth, so every coordinate is
// checked.
TEST(BatchNorm, TrainingGradientsMatchNumerical) {
  for (const Shape& shape : {Shape{2, 3, 4, 5}, Shape{6, 3}}) {
    SCOPED_TRACE(ShapeString(shape));
    std::mt19937 rng(31);
    const int64_t c = shape.back();
    BatchNorm bn({c});
    Tensor x = RandomTensor(shape, &rng);
    Tensor gamma = RandomTensor({c}, &rng, 0.5f, 1.5f);
    Tensor beta = RandomTensor({c}, &rng);
    Tensor r = RandomTensor(shape, &rng);
    auto loss = [&] {
      BatchNorm fresh({c});
      Tensor y;
      PS_EXPECT_OK(fresh.ForwardTraining(x, gamma, beta, &y));
      return Dot(y, r);
    };
    Tensor y, dx, dgamma, dbeta;
    PS_ASSERT_OK(bn.ForwardTraining(x, gamma, beta, &y));
    PS_ASSERT_OK(bn.Backward(gamma, r, &dx, &dgamma, &dbeta));
    GradCheckOptions options;
    options.eps = 1e-3;
    options.atol = 1e-3;
    options.rtol = 1e-2;
    ExpectGradientMatches("x", &x, dx, loss, options);
    ExpectGradientMatches("gamma", &gamma, dgamma, loss, options);
    ExpectGradientMatches("beta", &beta, dbeta, loss, options);
  }
}

// Each channel comes out with mean beta and standard deviation gamma (up to
// epsilon), whatever the input's scale.
TEST(BatchNorm, TrainingNormalizesEachChannel) {
  std::mt19937 rng(32);
  BatchNorm bn({2});
  Tensor x = RandomTensor({50, 2}, &rng, -10.0f, 30.0f);
  Tensor gamma({2}, {2.0f, 0.5f}), beta({2}, {1.0f, -3.0f});
  Tensor y;
  PS_ASSERT_OK(bn.ForwardTraining(x, gamma, beta, &y));
  for (int k = 0; k < 2; ++k) {
    double sum = 0, sq = 0;
    for (int r = 0; r < 50; ++r) sum += y[r * 2 + k];
    const double mean = sum / 50;
    for (int r = 0; r < 50; ++r) sq += (y[r * 2 + k] - mean) * (y[r * 2 + k] - mean);
    EXPECT_NEAR(mean, beta[k], 1e-4);
    EXPECT_NEAR(std::sqrt(sq / 50), gamma[k], 1e-3);
  }
}

// Inference uses the moving statistics, worked out by hand:
// y = gamma * (x - mm) / sqrt(mv + 1e-3) + beta.
TEST(BatchNorm, InferenceUsesMovingStatistics) {
  BatchNorm bn({2});
  Tensor x({1, 2, 1, 2}, {1.0f, 2.0f, 3.0f, -4.0f});
  Tensor gamma({2}, {2.0f, 1.0f}), beta({2}, {0.5f, 0.0f});
  Tensor mm({2}, {1.0f, -2.0f}), mv({2}, {3.999f, 0.249f});  // sqrt(mv + eps) = 2, 0.5
  Tensor y;
  PS_ASSERT_OK(bn.ForwardInference(x, gamma, beta, mm, mv, &y));
  ASSERT_EQ(y.shape(), x.shape());
  EXPECT_NEAR(y[0], 2.0f * (1 - 1) / 2 + 0.5f, 1e-5);  // 0.5
  EXPECT_NEAR(y[1], 1.0f * (2 + 2) / 0.5f, 1e-5);      // 8
  EXPECT_NEAR(y[2], 2.0f * (3 - 1) / 2 + 0.5f, 1e-5);  // 2.5
  EXPECT_NEAR(y[3], 1.0f * (-4 + 2) / 0.5f, 1e-5);     // -4
}

// delta = (1 - 0.99) * (moving - batch), the variance with Bessel's
// correction: x per channel {1, 3} and {2, 6}: means 2 and 4, unbiased
// variances 2 and 8.
TEST(BatchNorm, MovingAverageDeltasMoveTowardBatchStatistics) {
  BatchNorm bn({2});
  Tensor x({2, 2}, {1.0f, 2.0f, 3.0f, 6.0f});
  Tensor gamma({2}, {1.0f, 1.0f}), beta({2}), y, dm, dv;
  Tensor mm({2}, {0.0f, 1.0f}), mv({2}, {1.0f, 1.0f});
  EXPECT_EQ(bn.MovingAverageDeltas(mm, mv, &dm, &dv).code(), Code::kFailedPrecondition);
  PS_ASSERT_OK(bn.ForwardTraining(x, gamma, beta, &y));
  PS_ASSERT_OK(bn.MovingAverageDeltas(mm, mv, &dm, &dv));
  EXPECT_NEAR(dm[0], 0.01f * (0 - 2), 1e-6);
  EXPECT_NEAR(dm[1], 0.01f * (1 - 4), 1e-6);
  EXPECT_NEAR(dv[0], 0.01f * (1 - 2), 1e-6);
  EXPECT_NEAR(dv[1], 0.01f * (1 - 8), 1e-6);
}

TEST(BatchNorm, RejectsBadShapes) {
  BatchNorm bn({3});
  Tensor gamma({3}), beta({3}), y, dx, dg, db;
  EXPECT_EQ(bn.ForwardTraining(Tensor({4, 2}), gamma, beta, &y).code(), Code::kInvalidArgument);
  EXPECT_EQ(bn.ForwardTraining(Tensor({4, 3}), Tensor({2}), beta, &y).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(bn.ForwardInference(Tensor({4, 3}), gamma, beta, Tensor({3}), Tensor({4}), &y).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(bn.Backward(gamma, Tensor({4, 3}), &dx, &dg, &db).code(), Code::kFailedPrecondition);
  PS_ASSERT_OK(bn.ForwardTraining(Tensor({4, 3}), gamma, beta, &y));
  EXPECT_EQ(bn.Backward(gamma, Tensor({5, 3}), &dx, &dg, &db).code(), Code::kFailedPrecondition);
}

}  // namespace
}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
