#include "worker/gradient_processing.h"
#include "core/testing/status_assertions.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace pstrain {
namespace {

const std::vector<std::string> kNames = {"a", "b"};
const std::vector<bool> kTrainable = {true, true};

std::vector<Tensor> Grads() { return {Tensor({2}, {3, 4}), Tensor({1}, {12})}; }
std::vector<Tensor> Params() { return {Tensor({2}, {1, -2}), Tensor({1}, {10})}; }

TEST(GradientProcessing, WeightDecayAddsToLossAndGradient) {
  GradientOptions o;
  o.weight_decay["a"] = 0.5f;
  auto g = Grads();
  float loss = 1.0f;
  PS_ASSERT_OK(ProcessGradients(o, kNames, kTrainable, Params(), 7, &g, &loss));
  // loss += 0.5 * (1 + 4) / 2; grad += 0.5 * w
  EXPECT_FLOAT_EQ(loss, 2.25f);
  EXPECT_FLOAT_EQ(g[0][0], 3.5f);
  EXPECT_FLOAT_EQ(g[0][1], 3.0f);
  EXPECT_FLOAT_EQ(g[1][0], 12.0f);
}

TEST(GradientProcessing, MultipliersScaleOneVariable) {
  GradientOptions o;
  o.multipliers["b"] = 0.25f;
  auto g = Grads();
  float loss = 0;
  PS_ASSERT_OK(ProcessGradients(o, kNames, kTrainable, Params(), 0, &g, &loss));
  EXPECT_FLOAT_EQ(g[1][0], 3.0f);
  EXPECT_FLOAT_EQ(g[0][0], 3.0f);
}

TEST(GradientProcessing, ClipByValue) {
  GradientOptions o;
  o.clip_value = 3.5f;
  auto g = Grads();
  float loss = 0;
  PS_ASSERT_OK(ProcessGradients(o, kNames, kTrainable, Params(), 0, &g, &loss));
  EXPECT_FLOAT_EQ(g[0][0], 3.0f);
  EXPECT_FLOAT_EQ(g[0][1], 3.5f);
  EXPECT_FLOAT_EQ(g[1][0], 3.5f);
}

TEST(GradientProcessing, ClipByNormIsPerVariable) {
  GradientOptions o;
  o.clip_norm = 2.5f;  // |a| = 5 -> halved; |b| = 12 -> scaled to 2.5
  auto g = Grads();
  float loss = 0;
  PS_ASSERT_OK(ProcessGradients(o, kNames, kTrainable, Params(), 0, &g, &loss));
  EXPECT_FLOAT_EQ(g[0][0], 1.5f);
  EXPECT_FLOAT_EQ(g[0][1], 2.0f);
  EXPECT_FLOAT_EQ(g[1][0], 2.5f);
}

TEST(GradientProcessing, ClipByGlobalNorm) {
  GradientOptions o;
  o.clip_global_norm = 6.5f;  // global norm sqrt(9 + 16 + 144) = 13 -> halved
  auto g = Grads();
  float loss = 0;
  PS_ASSERT_OK(ProcessGradients(o, kNames, kTrainable, Params(), 0, &g, &loss));
  EXPECT_FLOAT_EQ(g[0][0], 1.5f);
  EXPECT_FLOAT_EQ(g[0][1], 2.0f);
  EXPECT_FLOAT_EQ(g[1][0], 6.0f);
  auto small = Grads();
  o.clip_global_norm = 100;  // under the limit: untouched
  PS_ASSERT_OK(ProcessGradients(o, kNames, kTrainable, Params(), 0, &small, &loss));
  EXPECT_FLOAT_EQ(small[1][0], 12.0f);
}

TEST(GradientProcessing, NanOrInfNamesTheStepAndVariable) {
  GradientOptions o;
  o.clip_global_norm = 1;
  auto g = Grads();
  g[1][0] = std::numeric_limits<float>::quiet_NaN();
  float loss = 0;
  Status s = ProcessGradients(o, kNames, kTrainable, Params(), 42, &g, &loss);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("gradient of b is NaN at step 42"), std::string::npos) << s.message();
  g = Grads();
  g[0][1] = std::numeric_limits<float>::infinity();
  s = ProcessGradients(o, kNames, kTrainable, Params(), 3, &g, &loss);
  EXPECT_NE(s.message().find("gradient of a is Inf at step 3"), std::string::npos) << s.message();
}

// Large gradients go through the vectorized check: one bad element anywhere
// (here the last, in the vector loop's tail) is found; the largest finite
// floats are not taken for infinities.
TEST(GradientProcessing, NonFiniteAnywhereInALargeGradientIsFound) {
  const std::vector<std::string> names = {"w"};
  const std::vector<bool> trainable = {true};
  const std::vector<Tensor> params = {Tensor({1027})};
  float loss = 0;
  for (int64_t at : {int64_t{0}, int64_t{500}, int64_t{1026}}) {
    for (float bad :
         {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::infinity()}) {
      std::vector<Tensor> g = {Tensor({1027})};
      g[0][at] = bad;
      Status s = ProcessGradients(GradientOptions(), names, trainable, params, 7, &g, &loss);
      EXPECT_EQ(s.code(), Code::kInvalidArgument) << at;
    }
  }
  std::vector<Tensor> huge = {Tensor({1027})};
  for (int64_t k = 0; k < huge[0].size(); ++k) {
    huge[0][k] = (k % 2 ? 1 : -1) * std::numeric_limits<float>::max();
  }
  PS_EXPECT_OK(ProcessGradients(GradientOptions(), names, trainable, params, 7, &huge, &loss));
}

// "b" is a moving statistic: its delta passes untouched by weight decay and
// every clipping, and the global norm leaves it out (|a| = 5 is halved).
TEST(GradientProcessing, NonTrainableDeltasAreOnlyCheckedForNaN) {
  const std::vector<bool> trainable = {true, false};
  GradientOptions o;
  o.clip_value = 3.5f;
  o.clip_norm = 4.5f;
  o.clip_global_norm = 2.5f;
  auto g = Grads();
  float loss = 0;
  PS_ASSERT_OK(ProcessGradients(o, kNames, trainable, Params(), 0, &g, &loss));
  // a: clip by value {3, 3.5}, by norm 4.61 -> 4.5, global norm 4.5 -> 2.5.
  const float a0 = 3.0f * (4.5f / std::sqrt(21.25f)) * (2.5f / 4.5f);
  EXPECT_NEAR(g[0][0], a0, 1e-5);
  EXPECT_FLOAT_EQ(g[1][0], 12.0f);

  GradientOptions wd;
  wd.weight_decay["b"] = 0.5f;
  EXPECT_EQ(ProcessGradients(wd, kNames, trainable, Params(), 0, &g, &loss).code(),
            Code::kInvalidArgument);
  GradientOptions mult;
  mult.multipliers["b"] = 2;
  EXPECT_EQ(ProcessGradients(mult, kNames, trainable, Params(), 0, &g, &loss).code(),
            Code::kInvalidArgument);

  g = Grads();
  g[1][0] = std::numeric_limits<float>::quiet_NaN();
  Status s = ProcessGradients(GradientOptions(), kNames, trainable, Params(), 9, &g, &loss);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("update of b is NaN at step 9"), std::string::npos) << s.message();
}

TEST(GradientProcessing, UnknownVariablesAndBadFlags) {
  GradientOptions o;
  o.multipliers["zz"] = 2;
  auto g = Grads();
  float loss = 0;
  EXPECT_EQ(ProcessGradients(o, kNames, kTrainable, Params(), 0, &g, &loss).code(),
            Code::kInvalidArgument);
  auto ok = ParseVariableFloats("weight_decay", "local3/weights=0.004,local4/weights=4e-3");
  PS_ASSERT_OK(ok);
  EXPECT_FLOAT_EQ(ok->at("local4/weights"), 0.004f);
  EXPECT_EQ(ParseVariableFloats("weight_decay", "local3/weights").status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(ParseVariableFloats("weight_decay", "x=abc").status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace pstrain
