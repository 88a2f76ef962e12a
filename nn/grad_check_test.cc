// The gradient check must be able to fail, or every layer test passes vacuously.
#include "nn/grad_check.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cmath>

namespace pstrain {
namespace nn {
namespace {

// loss(x) = sum(x_i^2), gradient 2 x.
double SumOfSquares(const Tensor& x) {
  double s = 0;
  for (int64_t i = 0; i < x.size(); ++i) s += static_cast<double>(x[i]) * x[i];
  return s;
}

TEST(GradCheck, AcceptsTheRightGradient) {
  std::mt19937 rng(1);
  Tensor x = RandomTensor({3, 4}, &rng);
  Tensor grad(x.shape());
  for (int64_t i = 0; i < x.size(); ++i) grad[i] = 2 * x[i];
  ExpectGradientMatches("square", &x, grad, [&] { return SumOfSquares(x); }, {});
}

TEST(GradCheck, RejectsAWrongGradient) {
  std::mt19937 rng(1);
  Tensor x = RandomTensor({3, 4}, &rng);
  Tensor grad(x.shape());
  for (int64_t i = 0; i < x.size(); ++i) grad[i] = 2 * x[i];
  grad[5] += 0.1f;
  EXPECT_NONFATAL_FAILURE(
      ExpectGradientMatches("square", &x, grad, [&] { return SumOfSquares(x); }, {}), "d/dx[5]");
}

TEST(GradCheck, KinkTolerantStillRejectsAWrongGradient) {
  std::mt19937 rng(1);
  Tensor x = RandomTensor({3, 4}, &rng);
  Tensor grad(x.shape());
  for (int64_t i = 0; i < x.size(); ++i) grad[i] = 2 * x[i];
  grad[7] *= 1.2f;
  GradCheckOptions options;
  options.kink_tolerant = true;
  EXPECT_NONFATAL_FAILURE(ExpectGradientMatches(
                              "square", &x, grad, [&] { return SumOfSquares(x); }, options),
                          "d/dx[7]");
}

// |x| has a kink at 0: a step across it spoils the central difference (0
// here) but one side's difference still gives the true slope.
TEST(GradCheck, KinkTolerantAcceptsAKinkInsideTheStep) {
  Tensor x({1}, {0.004f});
  Tensor grad({1}, {1.0f});
  GradCheckOptions options;
  options.coords = {0};
  options.kink_tolerant = true;
  ExpectGradientMatches(
      "abs", &x, grad, [&] { return std::fabs(static_cast<double>(x[0])); }, options);
  options.kink_tolerant = false;
  EXPECT_NONFATAL_FAILURE(
      ExpectGradientMatches(
          "abs", &x, grad, [&] { return std::fabs(static_cast<double>(x[0])); }, options),
      "d/dx[0]");
}

TEST(GradCheck, RestoresTheInput) {
  std::mt19937 rng(1);
  Tensor x = RandomTensor({5}, &rng);
  Tensor before = x;
  Tensor grad(x.shape());
  for (int64_t i = 0; i < x.size(); ++i) grad[i] = 2 * x[i];
  ExpectGradientMatches("square", &x, grad, [&] { return SumOfSquares(x); }, {});
  for (int64_t i = 0; i < x.size(); ++i) EXPECT_EQ(x[i], before[i]);
}

}  // namespace
}  // namespace nn
}  // namespace pstrain
