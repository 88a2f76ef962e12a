// Optimizer updates against values worked out by hand from TensorFlow's
// published rules (ApplyGradientDescent, ApplyMomentum with and without
// use_nesterov), over three steps with lr 0.1, momentum 0.9, var0 1.0 and
// gradients 0.5, -0.2, 1.0.
#include "ps/optimizer.h"

#include <gtest/gtest.h>

namespace pstrain {
namespace {

proto::OptimizerConfig Config(const std::string& name, bool nesterov = false) {
  proto::OptimizerConfig c;
  c.set_name(name);
  c.set_learning_rate(0.1f);
  c.set_momentum(0.9f);
  c.set_use_nesterov(nesterov);
  return c;
}

struct Trace {
  std::vector<float> vars, accums;
};

Trace ApplyThreeSteps(const Optimizer& opt) {
  float var = 1.0f, accum = 0.0f;
  std::vector<float*> slots;
  if (!opt.slot_names().empty()) slots.push_back(&accum);
  Trace t;
  for (float g : {0.5f, -0.2f, 1.0f}) {
    opt.Apply(&var, slots, &g, 1);
    t.vars.push_back(var);
    t.accums.push_back(accum);
  }
  return t;
}

TEST(Optimizer, GradientDescentByHand) {
  auto opt = Optimizer::Create(Config("GradientDescent"));
  ASSERT_TRUE(opt.ok());
  EXPECT_TRUE((*opt)->slot_names().empty());
  Trace t = ApplyThreeSteps(**opt);
  // 1 - 0.05 = 0.95; + 0.02 = 0.97; - 0.1 = 0.87
  EXPECT_FLOAT_EQ(t.vars[0], 0.95f);
  EXPECT_FLOAT_EQ(t.vars[1], 0.97f);
  EXPECT_FLOAT_EQ(t.vars[2], 0.87f);
}

TEST(Optimizer, MomentumByHand) {
  auto opt = Optimizer::Create(Config("Momentum"));
  ASSERT_TRUE(opt.ok());
  EXPECT_EQ((*opt)->slot_names(), std::vector<std::string>{"Momentum"});
  Trace t = ApplyThreeSteps(**opt);
  // accum: 0.5, 0.9*0.5-0.2 = 0.25, 0.9*0.25+1 = 1.225
  // var:   1-0.05 = 0.95, 0.95-0.025 = 0.925, 0.925-0.1225 = 0.8025
  EXPECT_FLOAT_EQ(t.accums[0], 0.5f);
  EXPECT_FLOAT_EQ(t.accums[1], 0.25f);
  EXPECT_FLOAT_EQ(t.accums[2], 1.225f);
  EXPECT_FLOAT_EQ(t.vars[0], 0.95f);
  EXPECT_FLOAT_EQ(t.vars[1], 0.925f);
  EXPECT_FLOAT_EQ(t.vars[2], 0.8025f);
}

TEST(Optimizer, NesterovByHand) {
  auto opt = Optimizer::Create(Config("Momentum", /*nesterov=*/true));
  ASSERT_TRUE(opt.ok());
  Trace t = ApplyThreeSteps(**opt);
  // var -= lr*g + lr*m*accum:
  // 1 - 0.05 - 0.045 = 0.905; 0.905 + 0.02 - 0.0225 = 0.9025;
  // 0.9025 - 0.1 - 0.11025 = 0.69225
  EXPECT_FLOAT_EQ(t.vars[0], 0.905f);
  EXPECT_FLOAT_EQ(t.vars[1], 0.9025f);
  EXPECT_FLOAT_EQ(t.vars[2], 0.69225f);
  EXPECT_FLOAT_EQ(t.accums[2], 1.225f);
}

TEST(Optimizer, RejectsUnknownAndBadRates) {
  auto unknown = Optimizer::Create(Config("Adamax"));
  EXPECT_EQ(unknown.status().code(), Code::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("Adamax"), std::string::npos);
  proto::OptimizerConfig c = Config("GradientDescent");
  c.set_learning_rate(-1);
  EXPECT_EQ(Optimizer::Create(c).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace pstrain
