// Towers: K towers of batch B give the averaged gradient, and after one
// step of gradient descent the variables, of one tower on the K * B
// examples.
#include "nn/towers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "core/testing/status_assertions.h"
#include "nn/model_spec.h"

namespace pstrain {
namespace nn {
namespace {

// max |a - b| / max |b| over the tensor.
double RelativeError(const Tensor& a, const Tensor& b) {
  double diff = 0, scale = 1e-30;
  for (int64_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, static_cast<double>(std::fabs(a[i] - b[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(b[i])));
  }
  return diff / scale;
}

class TowersTest : public ::testing::TestWithParam<int> {};

TEST_P(TowersTest, KTowersOfBMatchOneTowerOfKB) {
  const int k = GetParam();
  constexpr int kPerTower = 4;
  auto spec = LoadModelSpec("cifar10");
  PS_ASSERT_OK(spec);
  auto towers = Towers::Create(*spec, k);
  ASSERT_TRUE(towers.ok()) << towers.status().ToString();
  auto one = Towers::Create(*spec, 1);
  PS_ASSERT_OK(one);

  std::vector<Tensor> params;
  for (const VariableSpec& v : (*one)->variables()) params.push_back(InitialValue(v, 9));
  Shape shape = (*one)->example_shape();
  shape.insert(shape.begin(), k * kPerTower);
  Tensor images(shape);
  std::mt19937 rng(1);
  std::normal_distribution<float> pixel;
  for (int64_t i = 0; i < images.size(); ++i) images[i] = pixel(rng);
  std::vector<int32_t> labels;
  for (int i = 0; i < k * kPerTower; ++i) labels.push_back(static_cast<int32_t>(rng() % 10));

  std::vector<Tensor> g_towers, g_one;
  auto loss_towers = (*towers)->LossAndGradients(params, images, labels, &g_towers);
  auto loss_one = (*one)->LossAndGradients(params, images, labels, &g_one);
  ASSERT_TRUE(loss_towers.ok()) << loss_towers.status().ToString();
  PS_ASSERT_OK(loss_one);
  EXPECT_NEAR(*loss_towers, *loss_one, 1e-5 * std::fabs(*loss_one));
  ASSERT_EQ(g_towers.size(), g_one.size());
  for (size_t v = 0; v < g_one.size(); ++v) {
    EXPECT_LE(RelativeError(g_towers[v], g_one[v]), 1e-5) << (*one)->variables()[v].name;
    // One step of gradient descent at 0.1 from the same variables.
    Tensor a = params[v], b = params[v];
    for (int64_t i = 0; i < a.size(); ++i) {
      a[i] -= 0.1f * g_towers[v][i];
      b[i] -= 0.1f * g_one[v][i];
    }
    EXPECT_LE(RelativeError(a, b), 1e-5) << (*one)->variables()[v].name;
  }
}

INSTANTIATE_TEST_SUITE_P(TwoAndThree, TowersTest, ::testing::Values(2, 3));

TEST(Towers, ABatchThatDoesNotSplitEvenlyIsRefused) {
  auto spec = LoadModelSpec("mnist");
  PS_ASSERT_OK(spec);
  auto towers = Towers::Create(*spec, 2);
  PS_ASSERT_OK(towers);
  std::vector<Tensor> params;
  for (const VariableSpec& v : (*towers)->variables()) params.push_back(InitialValue(v, 1));
  std::vector<Tensor> grads;
  auto r = (*towers)->LossAndGradients(params, Tensor({3, 28, 28, 1}), {0, 1, 2}, &grads);
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Towers::Create(*spec, 0).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace nn
}  // namespace pstrain
