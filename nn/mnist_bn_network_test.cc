// The mnist_bn network (nn/models/mnist_bn.pbtxt) against naive loops.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "core/testing/status_assertions.h"
#include "nn/grad_check.h"
#include "nn/graph_model.h"
#include "nn/model_spec.h"
#include "nn/reference_ops.h"

namespace pstrain {
namespace nn {
namespace {

// A fresh mnist_bn network (kept for the test's lifetime).
GraphModel* MnistBn() {
  static std::vector<std::unique_ptr<GraphModel>> models;
  auto model = GraphModel::Create(*LoadModelSpec("mnist_bn"));
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  models.push_back(std::move(model).value());
  return models.back().get();
}

// Indices into variables(), as the model orders them.
enum { kConv1W = 0, kBn1 = 1, kConv2W = 5, kBn2 = 6, kLocal3W = 10 };

// Parameters that keep every layer's activations O(1): gamma near 1, the
// moving variances positive.
std::vector<Tensor> TestParams(const Model& model, std::mt19937* rng) {
  std::vector<Tensor> params;
  for (const VariableSpec& v : model.variables()) {
    const std::string& n = v.name;
    auto ends = [&n](const std::string& s) {
      return n.size() >= s.size() && n.compare(n.size() - s.size(), s.size(), s) == 0;
    };
    float lo = -0.1f, hi = 0.1f;
    if (ends("gamma") || ends("moving_variance")) lo = 0.5f, hi = 1.5f;
    if (ends("moving_mean")) lo = -0.5f, hi = 0.5f;
    if (n == "conv1/weights") lo = -0.3f, hi = 0.3f;
    if (n == "local3/weights") lo = -0.03f, hi = 0.03f;
    if (n == "softmax_linear/weights") lo = -0.5f, hi = 0.5f;
    params.push_back(RandomTensor(v.shape, rng, lo, hi));
  }
  return params;
}

// Per-channel (last axis) mean and biased variance, in double.
void Moments(const Tensor& x, std::vector<double>* mean, std::vector<double>* var) {
  const int64_t c = x.shape().back(), m = x.size() / c;
  mean->assign(c, 0.0);
  var->assign(c, 0.0);
  for (int64_t i = 0; i < x.size(); ++i) (*mean)[i % c] += x[i] / static_cast<double>(m);
  for (int64_t i = 0; i < x.size(); ++i) {
    (*var)[i % c] += (x[i] - (*mean)[i % c]) * (x[i] - (*mean)[i % c]) / m;
  }
}

// gamma * (x - mean) / sqrt(var + 1e-3) + beta, per channel.
Tensor Normalize(const Tensor& x, const std::vector<double>& mean, const std::vector<double>& var,
                 const Tensor& gamma, const Tensor& beta) {
  Tensor y(x.shape());
  const int64_t c = x.shape().back();
  for (int64_t i = 0; i < x.size(); ++i) {
    const int64_t k = i % c;
    y[i] = static_cast<float>(gamma[k] * (x[i] - mean[k]) / std::sqrt(var[k] + 1e-3) + beta[k]);
  }
  return y;
}

// The whole network in naive loops that accumulate in double: inference
// normalizes with the moving statistics, training with the batch's.
Tensor ReferenceLogits(const std::vector<Tensor>& p, const Tensor& images, bool training) {
  auto bn = [&](const Tensor& x, int first) {
    std::vector<double> mean, var;
    if (training) {
      Moments(x, &mean, &var);
    } else {
      mean.assign(p[first + 2].data(), p[first + 2].data() + p[first + 2].size());
      var.assign(p[first + 3].data(), p[first + 3].data() + p[first + 3].size());
    }
    return Normalize(x, mean, var, p[first], p[first + 1]);
  };
  Tensor x = ReferenceConv2D(images, p[kConv1W], Tensor({32}), 1, true);
  x = ReferenceMaxPool(ReferenceRelu(bn(x, kBn1)), 2, 2, true);
  x = ReferenceConv2D(x, p[kConv2W], Tensor({64}), 1, true);
  x = ReferenceMaxPool(ReferenceRelu(bn(x, kBn2)), 2, 2, true);
  x.Reshape({images.shape()[0], 3136});
  x = ReferenceRelu(ReferenceDense(x, p[10], p[11]));
  x = ReferenceRelu(ReferenceDense(x, p[12], p[13]));
  return ReferenceDense(x, p[14], p[15]);
}

TEST(MnistBnModel, VariablesAndTrainableFlags) {
  GraphModel& model = *MnistBn();
  const auto& v = model.variables();
  ASSERT_EQ(v.size(), 16u);
  const std::string bn = "conv1/batch_normalization/";
  EXPECT_EQ(v[kConv1W].name, "conv1/weights");
  EXPECT_EQ(v[kBn1].name, bn + "gamma");
  EXPECT_EQ(v[kBn1 + 1].name, bn + "beta");
  EXPECT_EQ(v[kBn1 + 2].name, bn + "moving_mean");
  EXPECT_EQ(v[kBn1 + 3].name, bn + "moving_variance");
  EXPECT_EQ(v[kBn2 + 3].name, "conv2/batch_normalization/moving_variance");
  EXPECT_EQ(v[kBn2 + 3].shape, (Shape{64}));
  EXPECT_EQ(v[kLocal3W].name, "local3/weights");
  for (size_t i = 0; i < v.size(); ++i) {
    const bool moving = v[i].name.find("/moving_") != std::string::npos;
    EXPECT_EQ(v[i].trainable, !moving) << v[i].name;
  }
  EXPECT_EQ(InitialValue(v[kBn1 + 2], 1)[0], 0.0f);  // moving_mean
  EXPECT_EQ(InitialValue(v[kBn1 + 3], 1)[0], 1.0f);  // moving_variance
  EXPECT_EQ(InitialValue(v[kBn1], 1)[0], 1.0f);      // gamma
  PS_EXPECT_OK(CreateModel("mnist_bn"));
}

// The whole network in both modes against naive loops: inference normalizes
// with the moving statistics, training with the batch's.
TEST(MnistBnModel, LogitsMatchReferenceInBothModes) {
  GraphModel& model = *MnistBn();
  std::mt19937 rng(41);
  std::vector<Tensor> p = TestParams(model, &rng);
  Tensor images = RandomTensor({3, 28, 28, 1}, &rng, -0.5f, 0.5f);
  for (auto mode : {Mode::kInference, Mode::kTraining}) {
    const bool training = mode == Mode::kTraining;
    SCOPED_TRACE(training ? "training" : "inference");
    const Tensor want = ReferenceLogits(p, images, training);
    auto logits = model.LogitsIn(mode, p, images);
    ASSERT_TRUE(logits.ok()) << logits.status().ToString();
    ASSERT_EQ(logits->shape(), (Shape{3, 10}));
    for (int64_t i = 0; i < want.size(); ++i) {
      EXPECT_NEAR((*logits)[i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << "at " << i;
    }
  }
}

// Every trainable variable's gradient against central differences of the
// training-mode loss, at its largest coordinates and a few random ones.
TEST(MnistBnModel, TrainableGradientsMatchNumerical) {
  GraphModel& model = *MnistBn();
  std::mt19937 rng(42);
  std::vector<Tensor> p = TestParams(model, &rng);
  Tensor images = RandomTensor({2, 28, 28, 1}, &rng, -0.5f, 0.5f);
  std::vector<int32_t> labels = {7, 2};
  std::vector<Tensor> grads;
  PS_ASSERT_OK(model.LossAndGradients(p, images, labels, &grads));
  ASSERT_EQ(grads.size(), p.size());

  // The numerical side differentiates the naive forward, which
  // accumulates in double: the model's float forward (its GEMMs sum
  // hundreds of float products) leaves about 2e-6 of noise in the loss,
  // enough to spoil a difference over 2 eps; a larger eps would meet the
  // curvature that the batch statistics add.
  auto loss = [&] { return ReferenceCrossEntropy(ReferenceLogits(p, images, true), labels); };
  GradCheckOptions options;
  options.eps = 3e-4;
  options.atol = 2e-4;
  options.rtol = 3e-2;
  options.kink_tolerant = true;
  ExpectModelGradientsMatch(model.variables(), &p, grads, loss, options, &rng);
}

// The moving statistics get (1 - 0.99) * (moving - batch statistic), with the
// batch statistics of each BN layer's input worked out by hand and the
// variance Bessel-corrected, m / (m - 1).
TEST(MnistBnModel, MovingStatisticDeltasMatchHandComputed) {
  GraphModel& model = *MnistBn();
  std::mt19937 rng(43);
  std::vector<Tensor> p = TestParams(model, &rng);
  Tensor images = RandomTensor({2, 28, 28, 1}, &rng, -0.5f, 0.5f);
  std::vector<Tensor> grads;
  PS_ASSERT_OK(model.LossAndGradients(p, images, {1, 4}, &grads));

  auto expect_deltas = [&](const Tensor& x, int first) {
    std::vector<double> mean, var;
    Moments(x, &mean, &var);
    const double m = static_cast<double>(x.size() / x.shape().back());
    for (size_t k = 0; k < mean.size(); ++k) {
      const double want_mean = 0.01 * (p[first + 2][k] - mean[k]);
      const double want_var = 0.01 * (p[first + 3][k] - var[k] * m / (m - 1));
      EXPECT_NEAR(grads[first + 2][k], want_mean, 1e-6) << model.variables()[first + 2].name;
      EXPECT_NEAR(grads[first + 3][k], want_var, 1e-6) << model.variables()[first + 3].name;
    }
    return Normalize(x, mean, var, p[first], p[first + 1]);
  };
  Tensor c1 = ReferenceConv2D(images, p[kConv1W], Tensor({32}), 1, true);
  Tensor p1 = ReferenceMaxPool(ReferenceRelu(expect_deltas(c1, kBn1)), 2, 2, true);
  expect_deltas(ReferenceConv2D(p1, p[kConv2W], Tensor({64}), 1, true), kBn2);
}

TEST(MnistBnModel, RejectsBadInputs) {
  GraphModel& model = *MnistBn();
  std::mt19937 rng(44);
  std::vector<Tensor> p = TestParams(model, &rng);
  std::vector<Tensor> grads;
  Tensor images({2, 28, 28, 1});
  EXPECT_EQ(model.LossAndGradients(p, images, {0, 10}, &grads).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(model.LossAndGradients(p, images, {0}, &grads).status().code(), Code::kInvalidArgument);
  std::vector<Tensor> wrong = p;
  wrong[kBn1 + 2] = Tensor({64});
  EXPECT_EQ(model.Logits(wrong, images).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(model.Logits(p, Tensor({2, 28, 28, 3})).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace nn
}  // namespace pstrain
