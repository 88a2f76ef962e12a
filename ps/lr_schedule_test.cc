// Learning-rate schedules against values worked out by hand from TF's
// exponential_decay, piecewise_constant and polynomial_decay.
#include "ps/lr_schedule.h"
#include "core/testing/status_assertions.h"

#include <gtest/gtest.h>

#include <string>

namespace pstrain {
namespace {

proto::LrScheduleConfig Exponential(bool staircase) {
  proto::LrScheduleConfig c;
  c.set_kind(proto::LrScheduleConfig::EXPONENTIAL_DECAY);
  c.set_decay_steps(10);
  c.set_decay_rate(0.5f);
  c.set_staircase(staircase);
  return c;
}

proto::LrScheduleConfig Piecewise() {
  proto::LrScheduleConfig c;
  c.set_kind(proto::LrScheduleConfig::PIECEWISE_CONSTANT);
  for (int64_t b : {1000, 2000}) c.add_boundaries(b);
  for (float v : {0.1f, 0.01f, 0.001f}) c.add_values(v);
  return c;
}

TEST(LrSchedule, ConstantIsTheLearningRate) {
  auto s = LrSchedule::Create(proto::LrScheduleConfig(), 0.1f);
  PS_ASSERT_OK(s);
  EXPECT_FLOAT_EQ(s->At(0), 0.1f);
  EXPECT_FLOAT_EQ(s->At(1000000), 0.1f);
}

TEST(LrSchedule, ExponentialDecayByHand) {
  auto s = LrSchedule::Create(Exponential(/*staircase=*/false), 0.1f);
  PS_ASSERT_OK(s);
  // 0.1 * 0.5^(step / 10)
  EXPECT_FLOAT_EQ(s->At(0), 0.1f);
  EXPECT_FLOAT_EQ(s->At(5), 0.07071068f);    // 0.1 * 0.5^0.5 = 0.1 * 0.70710678
  EXPECT_FLOAT_EQ(s->At(10), 0.05f);         // 0.1 * 0.5
  EXPECT_FLOAT_EQ(s->At(25), 0.017677670f);  // 0.1 * 0.5^2.5 = 0.1 * 0.1767767
}

TEST(LrSchedule, ExponentialDecayStaircaseFloorsTheExponent) {
  auto s = LrSchedule::Create(Exponential(/*staircase=*/true), 0.1f);
  PS_ASSERT_OK(s);
  // 0.1 * 0.5^floor(step / 10)
  EXPECT_FLOAT_EQ(s->At(5), 0.1f);
  EXPECT_FLOAT_EQ(s->At(9), 0.1f);
  EXPECT_FLOAT_EQ(s->At(10), 0.05f);
  EXPECT_FLOAT_EQ(s->At(19), 0.05f);
  EXPECT_FLOAT_EQ(s->At(25), 0.025f);
}

TEST(LrSchedule, PolynomialDecayByHand) {
  proto::LrScheduleConfig c;
  c.set_kind(proto::LrScheduleConfig::POLYNOMIAL_DECAY);
  c.set_decay_steps(100);
  c.set_power(1);
  auto linear = LrSchedule::Create(c, 0.1f);
  PS_ASSERT_OK(linear);
  // fastText's linear decay: 0.1 * (1 - step / 100), 0 from step 100 on.
  EXPECT_FLOAT_EQ(linear->At(0), 0.1f);
  EXPECT_FLOAT_EQ(linear->At(25), 0.075f);
  EXPECT_FLOAT_EQ(linear->At(100), 0.0f);
  EXPECT_FLOAT_EQ(linear->At(500), 0.0f);
  c.set_power(2);
  c.set_end_learning_rate(0.01f);
  auto squared = LrSchedule::Create(c, 0.1f);
  PS_ASSERT_OK(squared);
  // (0.1 - 0.01) * (1 - 50 / 100)^2 + 0.01 = 0.09 * 0.25 + 0.01
  EXPECT_FLOAT_EQ(squared->At(50), 0.0325f);
  EXPECT_FLOAT_EQ(squared->At(1000), 0.01f);
  c.set_power(0);
  EXPECT_EQ(LrSchedule::Create(c, 0.1f).status().code(), Code::kInvalidArgument);
}

TEST(LrSchedule, PiecewiseConstantIncludesTheBoundaryInTheEarlierPiece) {
  auto s = LrSchedule::Create(Piecewise(), /*learning_rate=*/123.0f);  // ignored
  PS_ASSERT_OK(s);
  EXPECT_FLOAT_EQ(s->At(0), 0.1f);
  EXPECT_FLOAT_EQ(s->At(1000), 0.1f);
  EXPECT_FLOAT_EQ(s->At(1001), 0.01f);
  EXPECT_FLOAT_EQ(s->At(2000), 0.01f);
  EXPECT_FLOAT_EQ(s->At(2001), 0.001f);
  EXPECT_FLOAT_EQ(s->At(1000000), 0.001f);
}

TEST(LrSchedule, RejectsBadConfigsNamingTheField) {
  proto::LrScheduleConfig no_steps = Exponential(false);
  no_steps.set_decay_steps(0);
  proto::LrScheduleConfig no_rate = Exponential(false);
  no_rate.set_decay_rate(0);
  proto::LrScheduleConfig extra_value = Piecewise();
  extra_value.add_values(0.0001f);
  proto::LrScheduleConfig unordered = Piecewise();
  unordered.set_boundaries(1, 1000);
  proto::LrScheduleConfig negative_value = Piecewise();
  negative_value.set_values(1, -0.01f);
  struct Case {
    std::string field;
    float learning_rate;
    proto::LrScheduleConfig config;
  };
  const Case cases[] = {
      {"learning_rate", -0.1f, proto::LrScheduleConfig()},
      {"decay_steps", 0.1f, no_steps},
      {"decay_rate", 0.1f, no_rate},
      {"values", 0.1f, extra_value},
      {"boundaries", 0.1f, unordered},
      {"values", 0.1f, negative_value},
  };
  for (const Case& c : cases) {
    auto s = LrSchedule::Create(c.config, c.learning_rate);
    EXPECT_EQ(s.status().code(), Code::kInvalidArgument) << c.field;
    EXPECT_NE(s.status().message().find(c.field), std::string::npos) << s.status().message();
  }
}

}  // namespace
}  // namespace pstrain
