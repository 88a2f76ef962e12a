#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "core/testing/status_assertions.h"
#include "nn/cpu/softmax_xent.h"
#include "nn/grad_check.h"
#include "nn/model.h"
#include "nn/reference_ops.h"

namespace pstrain {
namespace nn {
namespace {

std::unique_ptr<Model> Mnist() {
  auto model = CreateModel("mnist");
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return std::move(model).value();
}

// Parameters scaled so every layer's activations are O(1) and gradients are
// far above the numerical noise (TF's init leaves early-layer gradients tiny).
std::vector<Tensor> TestParams(const Model& model, std::mt19937* rng) {
  const float scale[] = {0.3f, 0.1f, 0.06f, 0.1f, 0.03f, 0.1f, 0.05f, 0.1f, 0.5f, 0.1f};
  std::vector<Tensor> params;
  for (size_t i = 0; i < model.variables().size(); ++i) {
    params.push_back(RandomTensor(model.variables()[i].shape, rng, -scale[i], scale[i]));
  }
  return params;
}

TEST(CreateModel, UnknownNameIsInvalidArgument) {
  auto model = CreateModel("resnet");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), Code::kNotFound);
  EXPECT_NE(model.status().message().find("resnet"), std::string::npos);
}

TEST(MnistModel, VariablesInTensorFlowOrder) {
  auto model = Mnist();
  const std::vector<std::pair<std::string, Shape>> want = {
      {"conv1/weights", {5, 5, 1, 32}},     {"conv1/biases", {32}},
      {"conv2/weights", {5, 5, 32, 64}},    {"conv2/biases", {64}},
      {"local3/weights", {3136, 1024}},     {"local3/biases", {1024}},
      {"local4/weights", {1024, 10}},       {"local4/biases", {10}},
      {"softmax_linear/weights", {10, 10}}, {"softmax_linear/biases", {10}},
  };
  ASSERT_EQ(model->variables().size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(model->variables()[i].name, want[i].first);
    EXPECT_EQ(model->variables()[i].shape, want[i].second);
  }
  EXPECT_EQ(model->example_shape(), (Shape{28, 28, 1}));
  EXPECT_EQ(model->num_classes(), 10);
}

// The whole network against naive loops, which also pins local3's flatten to
// TF's NHWC order (h, w, c).
TEST(MnistModel, LogitsMatchReference) {
  auto model = Mnist();
  std::mt19937 rng(21);
  std::vector<Tensor> p = TestParams(*model, &rng);
  Tensor images = RandomTensor({3, 28, 28, 1}, &rng, -0.5f, 0.5f);
  auto logits = model->Logits(p, images);
  ASSERT_TRUE(logits.ok()) << logits.status().ToString();

  Tensor x =
      ReferenceMaxPool(ReferenceRelu(ReferenceConv2D(images, p[0], p[1], 1, true)), 2, 2, true);
  x = ReferenceMaxPool(ReferenceRelu(ReferenceConv2D(x, p[2], p[3], 1, true)), 2, 2, true);
  x.Reshape({3, 3136});
  x = ReferenceRelu(ReferenceDense(x, p[4], p[5]));
  x = ReferenceRelu(ReferenceDense(x, p[6], p[7]));
  Tensor want = ReferenceDense(x, p[8], p[9]);
  ASSERT_EQ(logits->shape(), (Shape{3, 10}));
  for (int64_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR((*logits)[i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << "at " << i;
  }
}

TEST(MnistModel, LossIsCrossEntropyOfLogits) {
  auto model = Mnist();
  std::mt19937 rng(22);
  std::vector<Tensor> p = TestParams(*model, &rng);
  Tensor images = RandomTensor({4, 28, 28, 1}, &rng, -0.5f, 0.5f);
  std::vector<int32_t> labels = {3, 0, 9, 3};
  std::vector<Tensor> grads;
  auto loss = model->LossAndGradients(p, images, labels, &grads);
  ASSERT_TRUE(loss.ok()) << loss.status().ToString();
  auto logits = model->Logits(p, images);
  PS_ASSERT_OK(logits);
  EXPECT_FLOAT_EQ(*loss, *cpu::SoftmaxCrossEntropy(*logits, labels, nullptr));
  ASSERT_EQ(grads.size(), p.size());
  for (size_t i = 0; i < p.size(); ++i) EXPECT_EQ(grads[i].shape(), p[i].shape());
}

// For every variable, checks the coordinates with the largest gradients (so
// the check is not vacuous) and a few random ones against central differences
// of the loss.
TEST(MnistModel, GradientsMatchNumerical) {
  auto model = Mnist();
  std::mt19937 rng(23);
  std::vector<Tensor> p = TestParams(*model, &rng);
  Tensor images = RandomTensor({2, 28, 28, 1}, &rng, -0.5f, 0.5f);
  std::vector<int32_t> labels = {7, 2};
  std::vector<Tensor> grads;
  PS_ASSERT_OK(model->LossAndGradients(p, images, labels, &grads));

  auto loss = [&] {
    auto logits = model->Logits(p, images);
    PS_EXPECT_OK(logits);
    return ReferenceCrossEntropy(*logits, labels);
  };
  GradCheckOptions options;
  options.eps = 3e-4;
  options.atol = 3e-4;
  options.rtol = 3e-2;
  options.kink_tolerant = true;
  ExpectModelGradientsMatch(model->variables(), &p, grads, loss, options, &rng);
}

TEST(MnistModel, RejectsBadInputs) {
  auto model = Mnist();
  std::mt19937 rng(24);
  std::vector<Tensor> p = TestParams(*model, &rng);
  Tensor images({2, 28, 28, 1});
  std::vector<Tensor> grads;
  auto code = [&](const std::vector<Tensor>& params, const Tensor& x,
                  const std::vector<int32_t>& labels) {
    return model->LossAndGradients(params, x, labels, &grads).status().code();
  };
  EXPECT_EQ(code(p, images, {0, 10}), Code::kInvalidArgument);
  EXPECT_EQ(code(p, images, {0}), Code::kInvalidArgument);
  EXPECT_EQ(code(p, Tensor({2, 28, 28, 3}), {0, 1}), Code::kInvalidArgument);
  EXPECT_EQ(code(std::vector<Tensor>(p.begin(), p.end() - 1), images, {0, 1}),
            Code::kInvalidArgument);
  std::vector<Tensor> wrong = p;
  wrong[4] = Tensor({1024, 3136});
  EXPECT_EQ(code(wrong, images, {0, 1}), Code::kInvalidArgument);
  EXPECT_EQ(model->Logits(p, Tensor({2, 27, 28, 1})).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace nn
}  // namespace pstrain
