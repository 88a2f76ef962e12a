#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "nn/model.h"

namespace pstrain {
namespace nn {
namespace {

VariableSpec Normal(const std::string& name, Shape shape, float stddev) {
  return {name, std::move(shape), {InitKind::kTruncatedNormal, stddev}};
}

bool SameBits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && std::memcmp(a.data(), b.data(), a.bytes()) == 0;
}

TEST(InitialValue, SameNameAndSeedGiveSameBits) {
  VariableSpec spec = Normal("conv1/weights", {5, 5, 1, 32}, 0.05f);
  EXPECT_TRUE(SameBits(InitialValue(spec, 42), InitialValue(spec, 42)));
}

TEST(InitialValue, NameAndSeedChangeTheValues) {
  VariableSpec a = Normal("conv1/weights", {64}, 0.05f);
  VariableSpec b = Normal("conv2/weights", {64}, 0.05f);
  EXPECT_FALSE(SameBits(InitialValue(a, 1), InitialValue(b, 1)));
  EXPECT_FALSE(SameBits(InitialValue(a, 1), InitialValue(a, 2)));
}

// Pins the stream: a change here changes every model's starting point, and
// workers on different builds would disagree.
TEST(InitialValue, GoldenValues) {
  Tensor t = InitialValue(Normal("conv1/weights", {4}, 1.0f), 0);
  const float want[] = {0.467988282f, 1.83576453f, 0.315970182f, 1.67401969f};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(t[i], want[i]) << "at " << i;
}

TEST(InitialValue, TruncatedAtTwoStddevWithTheRightSpread) {
  const float stddev = 0.04f;
  Tensor t = InitialValue(Normal("local3/weights", {200000}, stddev), 7);
  double sum = 0, sum_sq = 0;
  for (int64_t i = 0; i < t.size(); ++i) {
    ASSERT_LE(std::fabs(t[i]), 2 * stddev) << "at " << i;
    sum += t[i];
    sum_sq += static_cast<double>(t[i]) * t[i];
  }
  const double mean = sum / t.size();
  const double sd = std::sqrt(sum_sq / t.size() - mean * mean);
  EXPECT_NEAR(mean, 0.0, 0.01 * stddev);
  // A normal truncated at 2 stddev keeps 0.8796 of its stddev.
  EXPECT_NEAR(sd / stddev, 0.8796, 0.01);
}

TEST(InitialValue, ConstantFillsEveryElement) {
  Tensor t = InitialValue({"conv2/biases", {64}, {InitKind::kConstant, 0.1f}}, 3);
  ASSERT_EQ(t.shape(), Shape{64});
  for (int64_t i = 0; i < t.size(); ++i) EXPECT_EQ(t[i], 0.1f) << "at " << i;
}

// Keras's variance scaling (its Glorot, He and LeCun initializers): the
// values' variance is scale / fan, the fans taken from the shape, and a
// uniform one stays within sqrt(3 scale / fan).
struct ScalingCase {
  Shape shape;
  float scale;
  proto::VarianceScalingSpec::Mode mode;
  proto::VarianceScalingSpec::Distribution distribution;
  double fan;  // what the mode makes of the shape
};

TEST(InitialValue, VarianceScalingTakesItsVarianceFromTheFans) {
  using VS = proto::VarianceScalingSpec;
  const ScalingCase cases[] = {
      {{300, 200}, 1, VS::FAN_AVG, VS::UNIFORM, 250},              // Glorot uniform
      {{3, 3, 16, 40}, 2, VS::FAN_IN, VS::TRUNCATED_NORMAL, 144},  // He normal, HWIO
      {{5, 5, 8, 32}, 1, VS::FAN_OUT, VS::TRUNCATED_NORMAL, 800},  // fan_out
      {{400, 100}, 1, VS::FAN_IN, VS::UNIFORM, 400},               // LeCun uniform
  };
  for (const ScalingCase& c : cases) {
    VariableSpec spec{
        "dense/kernel", c.shape, {InitKind::kVarianceScaling, c.scale, c.mode, c.distribution}};
    Tensor t = InitialValue(spec, 5);
    const double variance = c.scale / c.fan;
    const double bound = c.distribution == VS::UNIFORM ? std::sqrt(3 * variance)
                                                       : 2 * std::sqrt(variance) / 0.87962566;
    double sum = 0, sum_sq = 0;
    for (int64_t i = 0; i < t.size(); ++i) {
      ASSERT_LE(std::fabs(t[i]), bound * (1 + 1e-6)) << ShapeString(c.shape) << " at " << i;
      sum += t[i];
      sum_sq += static_cast<double>(t[i]) * t[i];
    }
    const double mean = sum / t.size();
    EXPECT_NEAR(sum_sq / t.size() - mean * mean, variance, 0.03 * variance)
        << ShapeString(c.shape) << " scale " << c.scale << " mode " << c.mode;
  }
}

}  // namespace
}  // namespace nn
}  // namespace pstrain
