#include "nn/mnist_head.h"

#include "nn/relu.h"

namespace pstrain {
namespace nn {
namespace {

// Offsets of the head's variables from `first`.
enum { kLocal3W, kLocal3B, kLocal4W, kLocal4B, kLogitsW, kLogitsB };

}  // namespace

std::vector<VariableSpec> MnistHead::Variables() {
  auto tn = [](float stddev) { return Initializer{InitKind::kTruncatedNormal, stddev}; };
  auto c = [](float value) { return Initializer{InitKind::kConstant, value}; };
  return {
      {"local3/weights", {7 * 7 * 64, 1024}, tn(0.04f)},
      {"local3/biases", {1024}, c(0.1f)},
      {"local4/weights", {1024, 10}, tn(0.04f)},
      {"local4/biases", {10}, c(0.1f)},
      {"softmax_linear/weights", {10, 10}, tn(1.0f / 192.0f)},
      {"softmax_linear/biases", {10}, c(0.0f)},
  };
}

MnistHead::MnistHead(DnnlContext* ctx, int first)
    : first_(first),
      local3_(ctx, 7 * 7 * 64, 1024),
      local4_(ctx, 1024, 10),
      softmax_linear_(ctx, 10, 10) {}

Status MnistHead::Forward(const Tensor& features, const std::vector<Tensor>& params,
                          Tensor* logits) {
  const Tensor* p = params.data() + first_;
  // Dense reads features [N,7,7,64] row-major: TF's NHWC flatten order (h, w, c).
  PS_RETURN_IF_ERROR(local3_.Forward(features, p[kLocal3W], p[kLocal3B], &a3_));
  ReluForward(a3_, &a3_);
  PS_RETURN_IF_ERROR(local4_.Forward(a3_, p[kLocal4W], p[kLocal4B], &a4_));
  ReluForward(a4_, &a4_);
  return softmax_linear_.Forward(a4_, p[kLogitsW], p[kLogitsB], logits);
}

Status MnistHead::Backward(const Tensor& features, const std::vector<Tensor>& params,
                           const Tensor& dlogits, Tensor* dfeatures, std::vector<Tensor>* grads) {
  const Tensor* p = params.data() + first_;
  Tensor* g = grads->data() + first_;
  PS_RETURN_IF_ERROR(
      softmax_linear_.Backward(a4_, p[kLogitsW], dlogits, &da4_, &g[kLogitsW], &g[kLogitsB]));
  ReluBackward(a4_, da4_, &da4_);
  PS_RETURN_IF_ERROR(local4_.Backward(a3_, p[kLocal4W], da4_, &da3_, &g[kLocal4W], &g[kLocal4B]));
  ReluBackward(a3_, da3_, &da3_);
  return local3_.Backward(features, p[kLocal3W], da3_, dfeatures, &g[kLocal3W], &g[kLocal3B]);
}

}  // namespace nn
}  // namespace pstrain
