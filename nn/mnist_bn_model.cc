#include "nn/mnist_bn_model.h"

#include <string>

#include "nn/relu.h"
#include "nn/softmax_xent.h"

namespace pstrain {
namespace nn {
namespace {

// Indices into variables() / params / grads.
enum Var {
  kConv1W,
  kBn1Gamma,
  kBn1Beta,
  kBn1Mean,
  kBn1Variance,
  kConv2W,
  kBn2Gamma,
  kBn2Beta,
  kBn2Mean,
  kBn2Variance,
  kLocal3W,
  kLocal3B,
  kLocal4W,
  kLocal4B,
  kLogitsW,
  kLogitsB,
  kNumVars
};

std::vector<VariableSpec> MnistBnVariables() {
  auto tn = [](float stddev) { return Initializer{InitKind::kTruncatedNormal, stddev}; };
  auto c = [](float value) { return Initializer{InitKind::kConstant, value}; };
  auto bn = [&](const std::string& scope, int64_t channels) {
    const std::string p = scope + "/batch_normalization/";
    return std::vector<VariableSpec>{
        {p + "gamma", {channels}, c(1.0f)},
        {p + "beta", {channels}, c(0.0f)},
        {p + "moving_mean", {channels}, c(0.0f), /*trainable=*/false},
        {p + "moving_variance", {channels}, c(1.0f), /*trainable=*/false},
    };
  };
  std::vector<VariableSpec> vars = {{"conv1/weights", {5, 5, 1, 32}, tn(5e-2f)}};
  for (VariableSpec& v : bn("conv1", 32)) vars.push_back(std::move(v));
  vars.push_back({"conv2/weights", {5, 5, 32, 64}, tn(5e-2f)});
  for (VariableSpec& v : bn("conv2", 64)) vars.push_back(std::move(v));
  for (VariableSpec& v : MnistHead::Variables()) vars.push_back(std::move(v));
  return vars;
}

}  // namespace

MnistBnModel::MnistBnModel()
    : variables_(MnistBnVariables()),
      ctx_(std::make_unique<DnnlContext>()),
      conv1_(ctx_.get(), {5, 5, 1, 32, 1, Padding::kSame}),
      conv2_(ctx_.get(), {5, 5, 32, 64, 1, Padding::kSame}),
      bn1_({32}),
      bn2_({64}),
      pool1_(ctx_.get(), {2, 2, Padding::kSame}),
      pool2_(ctx_.get(), {2, 2, Padding::kSame}),
      head_(ctx_.get(), kLocal3W),
      zero_bias1_({32}),
      zero_bias2_({64}) {}

Status MnistBnModel::Forward(Mode mode, const std::vector<Tensor>& p, const Tensor& images) {
  // BN in place on the convolution's output, in the mode asked.
  auto bn = [&](BatchNorm* layer, int gamma, Tensor* x) {
    if (mode == Mode::kTraining) return layer->ForwardTraining(*x, p[gamma], p[gamma + 1], x);
    return layer->ForwardInference(*x, p[gamma], p[gamma + 1], p[gamma + 2], p[gamma + 3], x);
  };
  PS_RETURN_IF_ERROR(conv1_.Forward(images, p[kConv1W], zero_bias1_, &c1_));
  PS_RETURN_IF_ERROR(bn(&bn1_, kBn1Gamma, &c1_));
  ReluForward(c1_, &c1_);
  PS_RETURN_IF_ERROR(pool1_.Forward(c1_, &p1_));
  PS_RETURN_IF_ERROR(conv2_.Forward(p1_, p[kConv2W], zero_bias2_, &c2_));
  PS_RETURN_IF_ERROR(bn(&bn2_, kBn2Gamma, &c2_));
  ReluForward(c2_, &c2_);
  PS_RETURN_IF_ERROR(pool2_.Forward(c2_, &p2_));
  return head_.Forward(p2_, p, &logits_);
}

StatusOr<float> MnistBnModel::LossAndGradients(const std::vector<Tensor>& p, const Tensor& images,
                                               const std::vector<int32_t>& labels,
                                               std::vector<Tensor>* grads) {
  PS_RETURN_IF_ERROR(CheckModelInputs("mnist_bn", variables_, example_shape(), p, images));
  if (static_cast<int64_t>(labels.size()) != images.dim(0)) {
    return InvalidArgument("mnist_bn: " + std::to_string(labels.size()) + " labels for " +
                           std::to_string(images.dim(0)) + " images");
  }
  PS_RETURN_IF_ERROR(Forward(Mode::kTraining, p, images));
  PS_ASSIGN_OR_RETURN(float loss, SoftmaxCrossEntropy(logits_, labels, &dlogits_));

  std::vector<Tensor>& g = *grads;
  g.resize(kNumVars);
  PS_RETURN_IF_ERROR(head_.Backward(p2_, p, dlogits_, &dp2_, &g));
  PS_RETURN_IF_ERROR(pool2_.Backward(c2_.shape(), dp2_, &dc2_));
  ReluBackward(c2_, dc2_, &dc2_);
  PS_RETURN_IF_ERROR(bn2_.Backward(p[kBn2Gamma], dc2_, &dc2_, &g[kBn2Gamma], &g[kBn2Beta]));
  PS_RETURN_IF_ERROR(conv2_.Backward(p1_, p[kConv2W], dc2_, &dp1_, &g[kConv2W], &unused_db_));
  PS_RETURN_IF_ERROR(pool1_.Backward(c1_.shape(), dp1_, &dc1_));
  ReluBackward(c1_, dc1_, &dc1_);
  PS_RETURN_IF_ERROR(bn1_.Backward(p[kBn1Gamma], dc1_, &dc1_, &g[kBn1Gamma], &g[kBn1Beta]));
  // The images need no gradient, so conv1 skips its backward-data pass.
  PS_RETURN_IF_ERROR(conv1_.Backward(images, p[kConv1W], dc1_, nullptr, &g[kConv1W], &unused_db_));
  // The moving statistics: their assign_sub deltas toward this batch's.
  PS_RETURN_IF_ERROR(
      bn1_.MovingAverageDeltas(p[kBn1Mean], p[kBn1Variance], &g[kBn1Mean], &g[kBn1Variance]));
  PS_RETURN_IF_ERROR(
      bn2_.MovingAverageDeltas(p[kBn2Mean], p[kBn2Variance], &g[kBn2Mean], &g[kBn2Variance]));
  return loss;
}

StatusOr<Tensor> MnistBnModel::LogitsIn(Mode mode, const std::vector<Tensor>& params,
                                        const Tensor& images) {
  PS_RETURN_IF_ERROR(CheckModelInputs("mnist_bn", variables_, example_shape(), params, images));
  PS_RETURN_IF_ERROR(Forward(mode, params, images));
  return logits_;
}

StatusOr<Tensor> MnistBnModel::Logits(const std::vector<Tensor>& params, const Tensor& images) {
  return LogitsIn(Mode::kInference, params, images);
}

}  // namespace nn
}  // namespace pstrain
