#include "nn/mnist_model.h"

#include <string>

#include "nn/relu.h"
#include "nn/softmax_xent.h"

namespace pstrain {
namespace nn {
namespace {

// Indices into variables() / params / grads.
enum Var {
  kConv1W,
  kConv1B,
  kConv2W,
  kConv2B,
  kLocal3W,
  kLocal3B,
  kLocal4W,
  kLocal4B,
  kLogitsW,
  kLogitsB,
  kNumVars
};

std::vector<VariableSpec> MnistVariables() {
  auto tn = [](float stddev) { return Initializer{InitKind::kTruncatedNormal, stddev}; };
  auto c = [](float value) { return Initializer{InitKind::kConstant, value}; };
  std::vector<VariableSpec> vars = {
      {"conv1/weights", {5, 5, 1, 32}, tn(5e-2f)},
      {"conv1/biases", {32}, c(0.0f)},
      {"conv2/weights", {5, 5, 32, 64}, tn(5e-2f)},
      {"conv2/biases", {64}, c(0.1f)},
  };
  for (VariableSpec& v : MnistHead::Variables()) vars.push_back(std::move(v));
  return vars;
}

}  // namespace

MnistModel::MnistModel()
    : variables_(MnistVariables()),
      ctx_(std::make_unique<DnnlContext>()),
      conv1_(ctx_.get(), {5, 5, 1, 32, 1, Padding::kSame}),
      conv2_(ctx_.get(), {5, 5, 32, 64, 1, Padding::kSame}),
      pool1_(ctx_.get(), {2, 2, Padding::kSame}),
      pool2_(ctx_.get(), {2, 2, Padding::kSame}),
      head_(ctx_.get(), kLocal3W) {}

Status MnistModel::Forward(const std::vector<Tensor>& p, const Tensor& images) {
  PS_RETURN_IF_ERROR(conv1_.Forward(images, p[kConv1W], p[kConv1B], &a1_));
  ReluForward(a1_, &a1_);
  PS_RETURN_IF_ERROR(pool1_.Forward(a1_, &p1_));
  PS_RETURN_IF_ERROR(conv2_.Forward(p1_, p[kConv2W], p[kConv2B], &a2_));
  ReluForward(a2_, &a2_);
  PS_RETURN_IF_ERROR(pool2_.Forward(a2_, &p2_));
  return head_.Forward(p2_, p, &logits_);
}

StatusOr<float> MnistModel::LossAndGradients(const std::vector<Tensor>& p, const Tensor& images,
                                             const std::vector<int32_t>& labels,
                                             std::vector<Tensor>* grads) {
  PS_RETURN_IF_ERROR(CheckModelInputs("mnist", variables_, example_shape(), p, images));
  if (static_cast<int64_t>(labels.size()) != images.dim(0)) {
    return InvalidArgument("mnist: " + std::to_string(labels.size()) + " labels for " +
                           std::to_string(images.dim(0)) + " images");
  }
  PS_RETURN_IF_ERROR(Forward(p, images));
  PS_ASSIGN_OR_RETURN(float loss, SoftmaxCrossEntropy(logits_, labels, &dlogits_));

  std::vector<Tensor>& g = *grads;
  g.resize(kNumVars);
  PS_RETURN_IF_ERROR(head_.Backward(p2_, p, dlogits_, &dp2_, &g));
  PS_RETURN_IF_ERROR(pool2_.Backward(a2_.shape(), dp2_, &da2_));
  ReluBackward(a2_, da2_, &da2_);
  PS_RETURN_IF_ERROR(conv2_.Backward(p1_, p[kConv2W], da2_, &dp1_, &g[kConv2W], &g[kConv2B]));
  PS_RETURN_IF_ERROR(pool1_.Backward(a1_.shape(), dp1_, &da1_));
  ReluBackward(a1_, da1_, &da1_);
  // The images need no gradient, so conv1 skips its backward-data pass.
  PS_RETURN_IF_ERROR(conv1_.Backward(images, p[kConv1W], da1_, nullptr, &g[kConv1W], &g[kConv1B]));
  return loss;
}

StatusOr<Tensor> MnistModel::Logits(const std::vector<Tensor>& params, const Tensor& images) {
  PS_RETURN_IF_ERROR(CheckModelInputs("mnist", variables_, example_shape(), params, images));
  PS_RETURN_IF_ERROR(Forward(params, images));
  return logits_;
}

}  // namespace nn
}  // namespace pstrain
