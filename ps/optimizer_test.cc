// Optimizer updates against values worked out by hand from TensorFlow's
// published rules (the training_ops functors, quoted in ps/update_rules.h),
// over three steps from var 1.0 with gradients 0.5, -0.2, 1.0 and, unless a
// test says otherwise, lr 0.1. Intermediate values are rounded to 7 digits;
// kTol allows for that and for float arithmetic.
#include "ps/optimizer.h"

#include <gflags/gflags.h>
#include <gtest/gtest.h>

#include <cmath>

#include "core/testing/status_assertions.h"
#include "ps/optimizer_flags.h"
#include "ps/variable_store.h"

namespace pstrain {
namespace {

constexpr float kTol = 1e-6f;

proto::OptimizerConfig Config(const std::string& name, bool nesterov = false) {
  proto::OptimizerConfig c;
  c.set_name(name);
  c.set_learning_rate(0.1f);
  c.set_momentum(0.9f);
  c.set_use_nesterov(nesterov);
  return c;
}

std::unique_ptr<Optimizer> Make(const proto::OptimizerConfig& c) {
  auto opt = Optimizer::Create(c);
  EXPECT_TRUE(opt.ok()) << opt.status().message();
  return opt.ok() ? std::move(opt).value() : nullptr;
}

// The variable and its slots after each of the three steps.
struct Trace {
  std::vector<float> vars;
  std::vector<std::vector<float>> slots;  // slots[step][slot]
};

// Applies the three gradients as updates 1, 2, 3 at the schedule's rate at
// step 0, with each slot at its initial value.
Trace ApplyThreeSteps(const Optimizer& opt) {
  float var = 1.0f;
  std::vector<float> slot_values(opt.slot_names().size());
  std::vector<float*> slots;
  for (size_t k = 0; k < slot_values.size(); ++k) {
    slot_values[k] = opt.slot_initial_value(static_cast<int>(k));
    slots.push_back(&slot_values[k]);
  }
  Trace t;
  int64_t update = 0;
  for (float g : {0.5f, -0.2f, 1.0f}) {
    opt.Apply(&var, slots, &g, 1, opt.lr_schedule().At(0), ++update);
    t.vars.push_back(var);
    t.slots.push_back(slot_values);
  }
  return t;
}

TEST(Optimizer, GradientDescentByHand) {
  auto opt = Make(Config("GradientDescent"));
  ASSERT_TRUE(opt);
  Trace t = ApplyThreeSteps(*opt);
  // 1 - 0.05 = 0.95; + 0.02 = 0.97; - 0.1 = 0.87
  EXPECT_FLOAT_EQ(t.vars[0], 0.95f);
  EXPECT_FLOAT_EQ(t.vars[1], 0.97f);
  EXPECT_FLOAT_EQ(t.vars[2], 0.87f);
}

TEST(Optimizer, MomentumByHand) {
  auto opt = Make(Config("Momentum"));
  ASSERT_TRUE(opt);
  Trace t = ApplyThreeSteps(*opt);
  // accum: 0.5, 0.9*0.5-0.2 = 0.25, 0.9*0.25+1 = 1.225
  // var:   1-0.05 = 0.95, 0.95-0.025 = 0.925, 0.925-0.1225 = 0.8025
  EXPECT_FLOAT_EQ(t.slots[0][0], 0.5f);
  EXPECT_FLOAT_EQ(t.slots[1][0], 0.25f);
  EXPECT_FLOAT_EQ(t.slots[2][0], 1.225f);
  EXPECT_FLOAT_EQ(t.vars[0], 0.95f);
  EXPECT_FLOAT_EQ(t.vars[1], 0.925f);
  EXPECT_FLOAT_EQ(t.vars[2], 0.8025f);
}

TEST(Optimizer, NesterovByHand) {
  auto opt = Make(Config("Momentum", /*nesterov=*/true));
  ASSERT_TRUE(opt);
  Trace t = ApplyThreeSteps(*opt);
  // var -= lr*g + lr*m*accum:
  // 1 - 0.05 - 0.045 = 0.905; 0.905 + 0.02 - 0.0225 = 0.9025;
  // 0.9025 - 0.1 - 0.11025 = 0.69225
  EXPECT_FLOAT_EQ(t.vars[0], 0.905f);
  EXPECT_FLOAT_EQ(t.vars[1], 0.9025f);
  EXPECT_FLOAT_EQ(t.vars[2], 0.69225f);
  EXPECT_FLOAT_EQ(t.slots[2][0], 1.225f);
}

TEST(Optimizer, AdagradByHand) {
  auto opt = Make(Config("Adagrad"));  // initial_accumulator_value 0.1
  ASSERT_TRUE(opt);
  Trace t = ApplyThreeSteps(*opt);
  // accum += g^2; var -= lr * g / sqrt(accum)
  // 1: accum 0.1 + 0.25 = 0.35; var 1 - 0.05 / 0.5916080 = 1 - 0.0845154 = 0.9154846
  // 2: accum 0.35 + 0.04 = 0.39; var 0.9154846 + 0.02 / 0.6244998 = + 0.0320256 = 0.9475102
  // 3: accum 0.39 + 1 = 1.39; var 0.9475102 - 0.1 / 1.1789826 = - 0.0848189 = 0.8626913
  EXPECT_FLOAT_EQ(t.slots[0][0], 0.35f);
  EXPECT_FLOAT_EQ(t.slots[1][0], 0.39f);
  EXPECT_FLOAT_EQ(t.slots[2][0], 1.39f);
  EXPECT_NEAR(t.vars[0], 0.9154846f, kTol);
  EXPECT_NEAR(t.vars[1], 0.9475102f, kTol);
  EXPECT_NEAR(t.vars[2], 0.8626913f, kTol);
}

TEST(Optimizer, AdadeltaByHand) {
  proto::OptimizerConfig c = Config("Adadelta");
  c.set_learning_rate(1.0f);
  c.set_rho(0.5f);
  c.set_epsilon(0.01f);
  auto opt = Make(c);
  ASSERT_TRUE(opt);
  Trace t = ApplyThreeSteps(*opt);
  // accum = rho*accum + (1-rho)*g^2
  // update = sqrt(accum_update + eps) / sqrt(accum + eps) * g; var -= lr * update
  // accum_update = rho*accum_update + (1-rho)*update^2
  // 1: accum 0.5*0.25 = 0.125; update sqrt(0.01)/sqrt(0.135)*0.5 = 0.1360828;
  //    var 0.8639172; accum_update 0.5 * 0.0185185 = 0.0092593
  // 2: accum 0.0625 + 0.02 = 0.0825; update sqrt(0.0192593)/sqrt(0.0925)*-0.2 = -0.0912597;
  //    var 0.9551769; accum_update 0.0046296 + 0.5 * 0.0083283 = 0.0087938
  // 3: accum 0.04125 + 0.5 = 0.54125; update sqrt(0.0187938)/sqrt(0.55125) = 0.1846430;
  //    var 0.7705339; accum_update 0.0043969 + 0.5 * 0.0340930 = 0.0214434
  EXPECT_FLOAT_EQ(t.slots[0][0], 0.125f);
  EXPECT_FLOAT_EQ(t.slots[1][0], 0.0825f);
  EXPECT_FLOAT_EQ(t.slots[2][0], 0.54125f);
  EXPECT_NEAR(t.slots[0][1], 0.0092593f, kTol);
  EXPECT_NEAR(t.slots[1][1], 0.0087938f, kTol);
  EXPECT_NEAR(t.slots[2][1], 0.0214434f, kTol);
  EXPECT_NEAR(t.vars[0], 0.8639172f, kTol);
  EXPECT_NEAR(t.vars[1], 0.9551769f, kTol);
  EXPECT_NEAR(t.vars[2], 0.7705339f, kTol);
}

TEST(Optimizer, AdadeltaDefaultsAreTensorFlows) {
  proto::OptimizerConfig c;
  c.set_name("Adadelta");  // lr 0.001, rho 0.95, epsilon 1e-8
  auto opt = Make(c);
  ASSERT_TRUE(opt);
  EXPECT_FLOAT_EQ(opt->lr_schedule().At(0), 0.001f);
  Trace t = ApplyThreeSteps(*opt);
  // 1: accum 0.05 * 0.25 = 0.0125; update = sqrt(1e-8)/sqrt(0.01250001)*0.5 = 4.472134e-4;
  //    accum_update 0.05 * 2e-7 = 1e-8; var 1 - 4.472134e-7
  EXPECT_FLOAT_EQ(t.slots[0][0], 0.0125f);
  EXPECT_NEAR(t.slots[0][1], 1e-8f, 1e-14f);
  EXPECT_NEAR(t.vars[0], 1.0f - 4.472134e-7f, 1e-7f);
}

TEST(Optimizer, AdamByHandWithBiasCorrection) {
  auto opt = Make(Config("Adam"));  // beta1 0.9, beta2 0.999, epsilon 1e-8
  ASSERT_TRUE(opt);
  Trace t = ApplyThreeSteps(*opt);
  // m += (1-b1)(g-m); v += (1-b2)(g^2-v); lr_t = lr sqrt(1-b2^t)/(1-b1^t);
  // var -= lr_t m / (sqrt(v) + eps)
  // 1: m 0.05; v 0.00025; lr_t 0.1*sqrt(0.001)/0.1 = 0.0316228;
  //    var 1 - 0.0316228*0.05/0.0158114 = 1 - 0.0999999 = 0.9000001
  // 2: m 0.045 - 0.02 = 0.025; v 0.00024975 + 0.00004 = 0.00028975;
  //    lr_t 0.1*sqrt(0.001999)/0.19 = 0.0235317;
  //    var 0.9000001 - 0.0235317*0.025/0.0170220 = - 0.0345606 = 0.8654395
  // 3: m 0.0225 + 0.1 = 0.1225; v 0.0002895 + 0.001 = 0.00128946;
  //    lr_t 0.1*sqrt(0.002997001)/0.271 = 0.0202011;
  //    var 0.8654395 - 0.0202011*0.1225/0.0359091 = - 0.0689138 = 0.7965257
  // Without the bias correction step 1 would move var by only 0.1*0.05/0.0158114*0.1.
  EXPECT_FLOAT_EQ(t.slots[0][0], 0.05f);
  EXPECT_FLOAT_EQ(t.slots[1][0], 0.025f);
  EXPECT_FLOAT_EQ(t.slots[2][0], 0.1225f);
  // 1 - 0.999f is 0.00099998713 in float: v is off by 1.3e-5 relative.
  EXPECT_NEAR(t.slots[0][1], 0.00025f, 0.00025f * 2e-5f);
  EXPECT_NEAR(t.slots[1][1], 0.00028975f, 0.00028975f * 2e-5f);
  EXPECT_NEAR(t.slots[2][1], 0.00128946f, 0.00128946f * 2e-5f);
  EXPECT_NEAR(t.vars[0], 0.9000001f, kTol);
  EXPECT_NEAR(t.vars[1], 0.8654395f, kTol);
  EXPECT_NEAR(t.vars[2], 0.7965257f, kTol);
}

TEST(Optimizer, AdamDefaultLearningRateIsTensorFlows) {
  proto::OptimizerConfig c;
  c.set_name("Adam");
  auto opt = Make(c);
  ASSERT_TRUE(opt);
  EXPECT_FLOAT_EQ(opt->lr_schedule().At(0), 0.001f);
}

proto::OptimizerConfig RMSPropConfig(float momentum, bool centered) {
  proto::OptimizerConfig c = Config("RMSProp");  // decay 0.9, epsilon 1e-10
  c.set_momentum(momentum);
  c.set_centered(centered);
  return c;
}

TEST(Optimizer, RMSPropByHand) {
  auto opt = Make(RMSPropConfig(/*momentum=*/0, /*centered=*/false));
  ASSERT_TRUE(opt);
  Trace t = ApplyThreeSteps(*opt);
  // ms += (1-decay)(g^2 - ms), from 1; mom = momentum*mom + lr g / sqrt(ms + eps); var -= mom
  // 1: ms 1 + 0.1(0.25-1) = 0.925; mom 0.05/0.9617692 = 0.0519875; var 0.9480125
  // 2: ms 0.925 + 0.1(0.04-0.925) = 0.8365; mom -0.02/0.9146037 = -0.0218674; var 0.9698799
  // 3: ms 0.8365 + 0.1(1-0.8365) = 0.85285; mom 0.1/0.9234988 = 0.1082838; var 0.8615961
  EXPECT_FLOAT_EQ(t.slots[0][0], 0.925f);
  EXPECT_FLOAT_EQ(t.slots[1][0], 0.8365f);
  EXPECT_FLOAT_EQ(t.slots[2][0], 0.85285f);
  EXPECT_NEAR(t.slots[2][1], 0.1082838f, kTol);
  EXPECT_NEAR(t.vars[0], 0.9480125f, kTol);
  EXPECT_NEAR(t.vars[1], 0.9698799f, kTol);
  EXPECT_NEAR(t.vars[2], 0.8615961f, kTol);
}

TEST(Optimizer, RMSPropWithMomentumByHand) {
  auto opt = Make(RMSPropConfig(/*momentum=*/0.5f, /*centered=*/false));
  ASSERT_TRUE(opt);
  Trace t = ApplyThreeSteps(*opt);
  // ms as in RMSPropByHand; mom = 0.5 mom + lr g / sqrt(ms + eps)
  // 1: mom 0.0519875; var 0.9480125
  // 2: mom 0.0259938 - 0.0218674 = 0.0041264; var 0.9438861
  // 3: mom 0.0020632 + 0.1082838 = 0.1103470; var 0.8335391
  EXPECT_NEAR(t.slots[1][1], 0.0041264f, kTol);
  EXPECT_NEAR(t.slots[2][1], 0.1103470f, kTol);
  EXPECT_NEAR(t.vars[0], 0.9480125f, kTol);
  EXPECT_NEAR(t.vars[1], 0.9438861f, kTol);
  EXPECT_NEAR(t.vars[2], 0.8335391f, kTol);
}

TEST(Optimizer, CenteredRMSPropByHand) {
  auto opt = Make(RMSPropConfig(/*momentum=*/0.5f, /*centered=*/true));
  ASSERT_TRUE(opt);
  Trace t = ApplyThreeSteps(*opt);
  // mg += (1-decay)(g - mg); ms as in RMSPropByHand;
  // mom = 0.5 mom + lr g / sqrt(ms - mg^2 + eps)
  // 1: mg 0.05; denom 0.925 - 0.0025 = 0.9225; mom 0.05/0.9604686 = 0.0520579; var 0.9479421
  // 2: mg 0.05 + 0.1(-0.25) = 0.025; denom 0.8365 - 0.000625 = 0.835875;
  //    mom 0.0260290 - 0.02/0.9142620 = 0.0260290 - 0.0218756 = 0.0041534; var 0.9437887
  // 3: mg 0.025 + 0.1(0.975) = 0.1225; denom 0.85285 - 0.0150063 = 0.8378438;
  //    mom 0.0020767 + 0.1/0.9153381 = 0.0020767 + 0.1092493 = 0.1113260; var 0.8324627
  EXPECT_FLOAT_EQ(t.slots[0][2], 0.05f);
  EXPECT_FLOAT_EQ(t.slots[1][2], 0.025f);
  EXPECT_FLOAT_EQ(t.slots[2][2], 0.1225f);
  EXPECT_NEAR(t.slots[2][1], 0.1113260f, kTol);
  EXPECT_NEAR(t.vars[0], 0.9479421f, kTol);
  EXPECT_NEAR(t.vars[1], 0.9437887f, kTol);
  EXPECT_NEAR(t.vars[2], 0.8324627f, kTol);
}

proto::OptimizerConfig FtrlConfig(float l1, float l2) {
  proto::OptimizerConfig c = Config("Ftrl");  // initial accumulator 0.1, lr power -0.5
  c.set_l1_regularization_strength(l1);
  c.set_l2_regularization_strength(l2);
  return c;
}

TEST(Optimizer, FtrlWithL1AndL2ByHand) {
  auto opt = Make(FtrlConfig(/*l1=*/0.05f, /*l2=*/0.1f));
  ASSERT_TRUE(opt);
  Trace t = ApplyThreeSteps(*opt);
  // new_accum = accum + g^2; linear += g - (sqrt(new_accum) - sqrt(accum)) / lr * var
  // quadratic = sqrt(new_accum) / lr + 2 l2; var = (sign(linear) l1 - linear) / quadratic
  // 1: accum 0.35; linear 0.5 - (0.5916080 - 0.3162278)/0.1 * 1 = -2.2538021;
  //    var (-0.05 + 2.2538021) / (5.9160798 + 0.2) = 2.2038021 / 6.1160798 = 0.3603292
  // 2: accum 0.39; linear -2.2538021 - 0.2 - 0.3289182 * 0.3603292 = -2.5723210;
  //    var 2.5223210 / 6.4449980 = 0.3913610
  // 3: accum 1.39; linear -2.5723210 + 1 - 5.5448281 * 0.3913610 = -3.7423505;
  //    var 3.6923505 / 11.9898261 = 0.3079570
  EXPECT_FLOAT_EQ(t.slots[2][0], 1.39f);
  EXPECT_NEAR(t.slots[0][1], -2.2538021f, kTol);
  EXPECT_NEAR(t.slots[1][1], -2.5723210f, kTol);
  EXPECT_NEAR(t.slots[2][1], -3.7423505f, 2 * kTol);
  EXPECT_NEAR(t.vars[0], 0.3603292f, kTol);
  EXPECT_NEAR(t.vars[1], 0.3913610f, kTol);
  EXPECT_NEAR(t.vars[2], 0.3079570f, kTol);
}

TEST(Optimizer, FtrlWithL2ShrinkageByHand) {
  proto::OptimizerConfig c = FtrlConfig(/*l1=*/0.2f, /*l2=*/0.1f);
  c.set_l2_shrinkage_regularization_strength(0.1f);
  auto opt = Make(c);
  ASSERT_TRUE(opt);
  Trace t = ApplyThreeSteps(*opt);
  // As FtrlWithL1AndL2ByHand, with g + 2 * 0.1 * var in linear (not in accum):
  // 1: linear 0.5 + 0.2 - 2.7538021 = -2.0538021; var 1.8538021 / 6.1160798 = 0.3031030
  // 2: linear -2.0538021 - 0.2 + 0.0606206 - 0.3289182 * 0.3031030 = -2.2928780;
  //    var 2.0928780 / 6.4449980 = 0.3247290
  // 3: linear -2.2928780 + 1 + 0.0649458 - 5.5448281 * 0.3247290 = -3.0284982;
  //    var 2.8284982 / 11.9898261 = 0.2359082
  EXPECT_FLOAT_EQ(t.slots[2][0], 1.39f);
  EXPECT_NEAR(t.vars[0], 0.3031030f, kTol);
  EXPECT_NEAR(t.vars[1], 0.3247290f, kTol);
  EXPECT_NEAR(t.vars[2], 0.2359082f, kTol);
}

TEST(Optimizer, FtrlWithOtherLearningRatePowerByHand) {
  proto::OptimizerConfig c = FtrlConfig(/*l1=*/0, /*l2=*/0.1f);
  c.set_learning_rate_power(-1.0f);
  auto opt = Make(c);
  ASSERT_TRUE(opt);
  Trace t = ApplyThreeSteps(*opt);
  // accum^(-lr_power) is accum itself:
  // 1: linear 0.5 - (0.35 - 0.1)/0.1 = -2; var 2 / (3.5 + 0.2) = 0.5405405
  // 2: linear -2 - 0.2 - 0.4 * 0.5405405 = -2.4162162; var 2.4162162 / 4.1 = 0.5893210
  // 3: linear -2.4162162 + 1 - 10 * 0.5893210 = -7.3094265; var 7.3094265 / 14.1 = 0.5183991
  EXPECT_NEAR(t.vars[0], 0.5405405f, kTol);
  EXPECT_NEAR(t.vars[1], 0.5893210f, kTol);
  EXPECT_NEAR(t.vars[2], 0.5183991f, kTol);
}

TEST(Optimizer, FtrlL1ZeroesSmallLinearTerms) {
  auto opt = Make(FtrlConfig(/*l1=*/3.0f, /*l2=*/0));
  ASSERT_TRUE(opt);
  Trace t = ApplyThreeSteps(*opt);
  // linear: -2.2538021, then -2.4538021 (var is 0), then -1.4538021: all within l1.
  for (float v : t.vars) EXPECT_EQ(v, 0.0f);
  EXPECT_NEAR(t.slots[2][1], -1.4538021f, kTol);
}

TEST(Optimizer, SlotNamesAndInitialValuesAreTensorFlows) {
  struct Case {
    proto::OptimizerConfig config;
    std::vector<std::string> names;
    std::vector<float> initial;
  };
  proto::OptimizerConfig adagrad = Config("Adagrad");
  adagrad.set_initial_accumulator_value(0.5f);
  const Case cases[] = {
      {Config("GradientDescent"), {}, {}},
      {Config("Momentum"), {"Momentum"}, {0}},
      {Config("Adagrad"), {"accumulator"}, {0.1f}},
      {adagrad, {"accumulator"}, {0.5f}},
      {Config("Adadelta"), {"accum", "accum_update"}, {0, 0}},
      {Config("Adam"), {"m", "v"}, {0, 0}},
      {RMSPropConfig(0, false), {"rms", "momentum"}, {1, 0}},
      {RMSPropConfig(0, true), {"rms", "momentum", "mg"}, {1, 0, 0}},
      {Config("Ftrl"), {"accumulator", "linear"}, {0.1f, 0}},
  };
  for (const Case& c : cases) {
    auto opt = Make(c.config);
    ASSERT_TRUE(opt) << c.config.name();
    EXPECT_EQ(opt->slot_names(), c.names) << c.config.name();
    EXPECT_EQ(*OptimizerSlotCount(c.config), static_cast<int>(c.names.size()));
    for (size_t k = 0; k < c.initial.size(); ++k) {
      EXPECT_EQ(opt->slot_initial_value(static_cast<int>(k)), c.initial[k]) << c.config.name();
    }
  }
}

TEST(Optimizer, RejectsBadParametersNamingThem) {
  struct Case {
    std::string param;
    proto::OptimizerConfig config;
  };
  std::vector<Case> cases;
  auto add = [&cases](const std::string& param, const std::string& name,
                      void (*set)(proto::OptimizerConfig*)) {
    proto::OptimizerConfig c = Config(name);
    set(&c);
    cases.push_back({param, c});
  };
  add("Adamax", "Adamax", [](proto::OptimizerConfig*) {});
  add("learning_rate", "GradientDescent",
      [](proto::OptimizerConfig* c) { c->set_learning_rate(-1); });
  add("learning_rate", "RMSProp", [](proto::OptimizerConfig* c) { c->clear_learning_rate(); });
  add("momentum", "Momentum", [](proto::OptimizerConfig* c) { c->set_momentum(-0.5f); });
  add("initial_accumulator_value", "Adagrad",
      [](proto::OptimizerConfig* c) { c->set_initial_accumulator_value(0); });
  add("rho", "Adadelta", [](proto::OptimizerConfig* c) { c->set_rho(1.5f); });
  add("epsilon", "Adadelta", [](proto::OptimizerConfig* c) { c->set_epsilon(-1e-8f); });
  add("beta1", "Adam", [](proto::OptimizerConfig* c) { c->set_beta1(1.0f); });
  add("beta2", "Adam", [](proto::OptimizerConfig* c) { c->set_beta2(-0.1f); });
  add("epsilon", "Adam", [](proto::OptimizerConfig* c) { c->set_epsilon(std::nanf("")); });
  add("decay", "RMSProp", [](proto::OptimizerConfig* c) { c->set_decay(2); });
  add("momentum", "RMSProp", [](proto::OptimizerConfig* c) { c->set_momentum(-1); });
  add("epsilon", "RMSProp", [](proto::OptimizerConfig* c) { c->set_epsilon(-1); });
  add("initial_accumulator_value", "Ftrl",
      [](proto::OptimizerConfig* c) { c->set_initial_accumulator_value(-0.1f); });
  add("learning_rate_power", "Ftrl",
      [](proto::OptimizerConfig* c) { c->set_learning_rate_power(0.5f); });
  add("l1_regularization_strength", "Ftrl",
      [](proto::OptimizerConfig* c) { c->set_l1_regularization_strength(-1); });
  add("l2_regularization_strength", "Ftrl",
      [](proto::OptimizerConfig* c) { c->set_l2_regularization_strength(-1); });
  add("l2_shrinkage_regularization_strength", "Ftrl",
      [](proto::OptimizerConfig* c) { c->set_l2_shrinkage_regularization_strength(-1); });
  add("learning_rate", "Ftrl", [](proto::OptimizerConfig* c) { c->set_learning_rate(0); });
  add("decay_steps", "Adam", [](proto::OptimizerConfig* c) {
    c->mutable_lr_schedule()->set_kind(proto::LrScheduleConfig::EXPONENTIAL_DECAY);
  });
  for (const Case& c : cases) {
    auto opt = Optimizer::Create(c.config);
    EXPECT_EQ(opt.status().code(), Code::kInvalidArgument) << c.param;
    EXPECT_NE(opt.status().message().find(c.param), std::string::npos)
        << c.param << ": " << opt.status().message();
  }
}

// Initializes a store holding "w" = 1 (and global_step) for `config`.
std::unique_ptr<VariableStore> StoreWithW(const proto::OptimizerConfig& config,
                                          int64_t global_step = 0) {
  auto store = std::make_unique<VariableStore>();
  VariableStore::InitOptions opts;
  opts.holds_global_step = true;
  opts.global_step = global_step;
  std::map<std::string, Tensor> init;
  init.emplace("w", Tensor({1}, {1.0f}));
  PS_EXPECT_OK(store->Initialize(opts, Make(config), std::move(init)));
  return store;
}

StatusOr<int64_t> Push(VariableStore* store, float g) {
  std::map<std::string, Tensor> grads;
  grads.emplace("w", Tensor({1}, {g}));
  return store->ApplyGradients(grads, /*increment_global_step=*/true);
}

float W(const VariableStore& store) { return (*store.Read({"w"}))[0].second[0]; }

// The store numbers each variable's updates 1, 2, 3 for Adam's t.
TEST(OptimizerInVariableStore, CountsEachVariablesUpdates) {
  auto store = StoreWithW(Config("Adam"));
  for (float g : {0.5f, -0.2f, 1.0f}) ASSERT_TRUE(Push(store.get(), g).ok());
  EXPECT_NEAR(W(*store), 0.7965257f, kTol);  // as AdamByHandWithBiasCorrection
}

// After a restore at global_step 1 the first update is t = 2:
// m 0.05, v 0.00025, lr_t 0.0235317; var 1 - 0.0235317*0.05/0.0158114 = 0.9255864
TEST(OptimizerInVariableStore, UpdateCountsStartAtTheRestoredGlobalStep) {
  auto store = StoreWithW(Config("Adam"), /*global_step=*/1);
  PS_ASSERT_OK(Push(store.get(), 0.5f));
  EXPECT_NEAR(W(*store), 0.9255864f, kTol);
}

// Each push is applied at the schedule's rate at the current global_step.
TEST(OptimizerInVariableStore, FollowsTheSchedule) {
  proto::OptimizerConfig c = Config("GradientDescent");
  proto::LrScheduleConfig* s = c.mutable_lr_schedule();
  s->set_kind(proto::LrScheduleConfig::PIECEWISE_CONSTANT);
  s->add_boundaries(1);
  s->add_values(0.1f);   // global_step <= 1
  s->add_values(0.01f);  // afterwards
  auto store = StoreWithW(c);
  EXPECT_FLOAT_EQ(store->learning_rate(), 0.1f);
  ASSERT_EQ(*Push(store.get(), 0.5f), 1);  // at step 0: 1 - 0.05 = 0.95
  ASSERT_EQ(*Push(store.get(), 0.5f), 2);  // at step 1: 0.95 - 0.05 = 0.9
  EXPECT_FLOAT_EQ(store->learning_rate(), 0.01f);
  ASSERT_EQ(*Push(store.get(), 0.5f), 3);  // at step 2: 0.9 - 0.005 = 0.895
  EXPECT_FLOAT_EQ(W(*store), 0.895f);
}

TEST(OptimizerInVariableStore, StartsSlotsAtTheirInitialValues) {
  auto store = StoreWithW(Config("Adagrad"));
  PS_ASSERT_OK(Push(store.get(), 0.5f));
  EXPECT_NEAR(W(*store), 0.9154846f, kTol);  // accum 0.1 + 0.25: as AdagradByHand
}

class OptimizerFlags : public ::testing::Test {
 protected:
  void Set(const char* flag, const char* value) {
    ASSERT_FALSE(gflags::SetCommandLineOption(flag, value).empty()) << flag;
  }
  gflags::FlagSaver saver_;
};

TEST_F(OptimizerFlags, DefaultsAreTheMnistRecipe) {
  auto c = OptimizerConfigFromFlags();
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->name(), "Momentum");
  EXPECT_FLOAT_EQ(c->learning_rate(), 0.01f);
  EXPECT_FLOAT_EQ(c->momentum(), 0.9f);
  EXPECT_TRUE(c->use_nesterov());
  EXPECT_EQ(c->lr_schedule().kind(), proto::LrScheduleConfig::CONSTANT);
}

// cifar10's recipe (nn/models/cifar10.pbtxt): what no flag gives comes from
// it; a flag given wins; a sync run takes the recipe's sync rate.
// A model of example-by-example updates: its workers make the updates at
// the flags' rate, and the ps tasks add them (GradientDescent at 1); sync
// replicas, which average, and other optimizers are refused.
TEST_F(OptimizerFlags, TheUpdatesOfAnExampleByExampleModelAreAddedOnThePs) {
  proto::ModelSpec spec;
  spec.set_name("fasttext");
  spec.mutable_recipe()->set_optimizer("GradientDescent");
  spec.mutable_recipe()->set_learning_rate(0.1f);
  Set("learning_rate", "0.5");
  Set("lr_schedule", "polynomial_decay");
  Set("decay_steps", "100");
  auto dense = PsOptimizerFromFlags(spec, /*sync=*/false);
  PS_ASSERT_OK(dense);
  EXPECT_FLOAT_EQ(dense->learning_rate(), 0.5f) << "another model trains at the flags' rate";
  spec.set_loss_reduction(proto::EXAMPLE_BY_EXAMPLE);
  auto adds = PsOptimizerFromFlags(spec, /*sync=*/false);
  PS_ASSERT_OK(adds);
  EXPECT_EQ(adds->name(), "GradientDescent");
  EXPECT_FLOAT_EQ(adds->learning_rate(), 1.0f);
  EXPECT_EQ(adds->lr_schedule().kind(), proto::LrScheduleConfig::CONSTANT);
  PS_EXPECT_CODE(PsOptimizerFromFlags(spec, /*sync=*/true), Code::kInvalidArgument);
  Set("optimizer", "Adagrad");
  PS_EXPECT_CODE(PsOptimizerFromFlags(spec, /*sync=*/false), Code::kInvalidArgument);
}

// fastText's rate falls to 0 over its run: a recipe's linear decay that
// names no steps decays over the run's, which the workers know.
TEST_F(OptimizerFlags, AnExampleByExampleRateDecaysOverTheRunUnlessTold) {
  proto::ModelSpec spec;
  spec.set_name("fasttext");
  spec.set_loss_reduction(proto::EXAMPLE_BY_EXAMPLE);
  spec.mutable_recipe()->set_optimizer("GradientDescent");
  spec.mutable_recipe()->set_learning_rate(0.1f);
  spec.mutable_recipe()->mutable_lr_schedule()->set_kind(proto::LrScheduleConfig::POLYNOMIAL_DECAY);
  spec.mutable_recipe()->mutable_lr_schedule()->set_power(1);
  auto over_run = ExampleUpdateConfigFromFlags(spec, 2235);
  PS_ASSERT_OK(over_run);
  EXPECT_FLOAT_EQ(over_run->learning_rate(), 0.1f);
  EXPECT_EQ(over_run->lr_schedule().decay_steps(), 2235);
  PS_EXPECT_CODE(ExampleUpdateConfigFromFlags(spec, 0), Code::kInvalidArgument);
  PS_EXPECT_OK(PsOptimizerFromFlags(spec, /*sync=*/false));
  // Flags that name the steps are taken as they are.
  Set("lr_schedule", "polynomial_decay");
  Set("decay_steps", "100");
  Set("learning_rate", "0.5");
  auto told = ExampleUpdateConfigFromFlags(spec, 2235);
  PS_ASSERT_OK(told);
  EXPECT_EQ(told->lr_schedule().decay_steps(), 100);
  EXPECT_FLOAT_EQ(told->learning_rate(), 0.5f);
}

TEST_F(OptimizerFlags, ModelRecipeFillsWhatNoFlagGives) {
  proto::TrainingRecipe recipe;
  recipe.set_optimizer("GradientDescent");
  recipe.set_learning_rate(0.1f);
  recipe.mutable_lr_schedule()->set_kind(proto::LrScheduleConfig::EXPONENTIAL_DECAY);
  recipe.mutable_lr_schedule()->set_decay_steps(136718);
  recipe.mutable_lr_schedule()->set_decay_rate(0.1f);
  recipe.mutable_lr_schedule()->set_staircase(true);
  auto c = OptimizerConfigFromFlags(recipe, /*sync=*/false);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->name(), "GradientDescent");
  EXPECT_FLOAT_EQ(c->learning_rate(), 0.1f);
  EXPECT_EQ(c->lr_schedule().kind(), proto::LrScheduleConfig::EXPONENTIAL_DECAY);
  EXPECT_EQ(c->lr_schedule().decay_steps(), 136718);
  EXPECT_TRUE(c->lr_schedule().staircase());

  recipe.set_sync_learning_rate(0.3f);
  EXPECT_FLOAT_EQ(OptimizerConfigFromFlags(recipe, /*sync=*/true)->learning_rate(), 0.3f);
  EXPECT_FLOAT_EQ(OptimizerConfigFromFlags(recipe, /*sync=*/false)->learning_rate(), 0.1f);

  Set("learning_rate", "0.05");
  Set("lr_schedule", "constant");
  c = OptimizerConfigFromFlags(recipe, /*sync=*/true);
  PS_ASSERT_OK(c);
  EXPECT_FLOAT_EQ(c->learning_rate(), 0.05f);
  EXPECT_EQ(c->lr_schedule().kind(), proto::LrScheduleConfig::CONSTANT);

  // Another optimizer than the recipe's does not take the recipe's rate.
  Set("optimizer", "Adam");
  gflags::SetCommandLineOption("learning_rate", "0.01");
  proto::TrainingRecipe momentum;
  momentum.set_optimizer("Momentum");
  momentum.set_momentum(0.5f);
  c = OptimizerConfigFromFlags(momentum, false);
  PS_ASSERT_OK(c);
  EXPECT_EQ(c->name(), "Adam");
  EXPECT_EQ(c->momentum(), 0.0f);
}

TEST_F(OptimizerFlags, FlagsNotGivenLeaveTensorFlowsDefaults) {
  Set("optimizer", "RMSProp");
  Set("learning_rate", "0.05");
  Set("centered", "true");
  auto c = OptimizerConfigFromFlags();
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_FLOAT_EQ(c->learning_rate(), 0.05f);
  EXPECT_TRUE(c->centered());
  EXPECT_EQ(c->momentum(), 0.0f);  // not --momentum's 0.9
  EXPECT_FALSE(c->has_epsilon());  // RMSProp's 1e-10, not --epsilon's 1e-8
  EXPECT_FALSE(c->has_decay());
}

TEST_F(OptimizerFlags, GivenFlagsReachTheConfig) {
  Set("optimizer", "Ftrl");
  Set("learning_rate", "0.2");
  Set("l1_regularization_strength", "0.01");
  Set("l2_regularization_strength", "0.02");
  Set("learning_rate_power", "-1");
  Set("initial_accumulator_value", "0.3");
  Set("lr_schedule", "piecewise_constant");
  Set("lr_boundaries", "1000,2000");
  Set("lr_values", "0.1,0.01,0.001");
  auto c = OptimizerConfigFromFlags();
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_FLOAT_EQ(c->l1_regularization_strength(), 0.01f);
  EXPECT_FLOAT_EQ(c->l2_regularization_strength(), 0.02f);
  EXPECT_FLOAT_EQ(c->learning_rate_power(), -1.0f);
  EXPECT_FLOAT_EQ(c->initial_accumulator_value(), 0.3f);
  EXPECT_EQ(c->lr_schedule().kind(), proto::LrScheduleConfig::PIECEWISE_CONSTANT);
  EXPECT_EQ(c->lr_schedule().boundaries_size(), 2);
  EXPECT_EQ(c->lr_schedule().boundaries(1), 2000);
  EXPECT_FLOAT_EQ(c->lr_schedule().values(2), 0.001f);

  Set("optimizer", "Adam");
  Set("lr_schedule", "exponential_decay");
  Set("decay_steps", "100");
  Set("decay_rate", "0.96");
  Set("staircase", "true");
  Set("beta1", "0.8");
  c = OptimizerConfigFromFlags();
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_FLOAT_EQ(c->beta1(), 0.8f);
  EXPECT_FALSE(c->has_beta2());
  EXPECT_EQ(c->lr_schedule().decay_steps(), 100);
  EXPECT_FLOAT_EQ(c->lr_schedule().decay_rate(), 0.96f);
  EXPECT_TRUE(c->lr_schedule().staircase());
}

TEST_F(OptimizerFlags, BadValuesNameTheParameter) {
  struct Case {
    const char* context_flag;
    const char* context_value;
    const char* flag;
    const char* value;
    const char* named;  // in the message
  };
  const Case cases[] = {
      {"optimizer", "Adamax", "optimizer", "Adamax", "Adamax"},
      {"optimizer", "Adam", "beta1", "1.5", "beta1"},
      {"optimizer", "Adadelta", "rho", "-1", "rho"},
      {"optimizer", "RMSProp", "centered", "true", "learning_rate"},  // required
      {"lr_schedule", "cosine", "lr_schedule", "cosine", "lr_schedule"},
      {"lr_schedule", "piecewise_constant", "lr_boundaries", "1000,x", "lr_boundaries"},
      {"lr_schedule", "piecewise_constant", "lr_values", "0.1,,0.2", "lr_values"},
      {"lr_schedule", "exponential_decay", "decay_rate", "0.9", "decay_steps"},  // steps 0
  };
  for (const Case& c : cases) {
    gflags::FlagSaver restore;
    Set(c.context_flag, c.context_value);
    Set(c.flag, c.value);
    auto config = OptimizerConfigFromFlags();
    EXPECT_EQ(config.status().code(), Code::kInvalidArgument) << c.named;
    EXPECT_NE(config.status().message().find(c.named), std::string::npos)
        << c.named << ": " << config.status().message();
  }
}

}  // namespace
}  // namespace pstrain
