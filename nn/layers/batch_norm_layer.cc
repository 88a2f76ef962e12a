// tf.layers.batch_normalization over the channels, on the BatchNorm kernel:
// gamma and beta trained; the moving mean and variance moved by assign_sub
// deltas, given in place of their gradients.
#include <memory>

#include "nn/layers/layers.h"

namespace pstrain {
namespace nn {
namespace {

enum { kGamma, kBeta, kMovingMean, kMovingVariance };

class BatchNormLayer : public Layer {
 public:
  BatchNormLayer(const std::string& name, float epsilon, float momentum, Backend* backend)
      : Layer(name), epsilon_(epsilon), momentum_(momentum), backend_(backend) {}

  std::vector<VariableSpec> Variables() const override {
    const Initializer one{InitKind::kConstant, 1.0f}, zero{InitKind::kConstant, 0.0f};
    return {{name() + "/gamma", {channels_}, one},
            {name() + "/beta", {channels_}, zero},
            {name() + "/moving_mean", {channels_}, zero, /*trainable=*/false},
            {name() + "/moving_variance", {channels_}, one, /*trainable=*/false}};
  }

  StatusOr<Shape> OutputShape(const Shape& in) override {
    if (in.empty() || in.back() <= 0)
      return InvalidArgument("input " + ShapeString(in) + " has no channels");
    channels_ = in.back();
    PS_ASSIGN_OR_RETURN(bn_, backend_->BatchNorm({channels_, epsilon_, momentum_}));
    return in;
  }

  Status Forward(Mode mode, const Tensor& x, const Params& p, Tensor* y) override {
    if (mode == Mode::kTraining) return bn_->ForwardTraining(x, *p[kGamma], *p[kBeta], y);
    return bn_->ForwardInference(x, *p[kGamma], *p[kBeta], *p[kMovingMean], *p[kMovingVariance], y);
  }

  Status Backward(const Tensor&, const Tensor&, const Params& p, const Tensor& dy, Tensor* dx,
                  const Grads& g) override {
    PS_RETURN_IF_ERROR(
        bn_->Backward(*p[kGamma], dy, dx != nullptr ? dx : &unused_dx_, g[kGamma], g[kBeta]));
    return bn_->MovingAverageDeltas(*p[kMovingMean], *p[kMovingVariance], g[kMovingMean],
                                    g[kMovingVariance]);
  }

 private:
  const float epsilon_, momentum_;
  Backend* const backend_;
  int64_t channels_ = 0;
  std::unique_ptr<BatchNormKernel> bn_;
  Tensor unused_dx_;
};

}  // namespace

StatusOr<std::unique_ptr<Layer>> CreateBatchNormLayer(const std::string& name,
                                                      const proto::BatchNormSpec& spec,
                                                      const LayerContext& context) {
  const float epsilon = spec.epsilon() > 0 ? spec.epsilon() : 1e-3f;
  const float momentum = spec.momentum() > 0 ? spec.momentum() : 0.99f;
  if (spec.epsilon() < 0 || !(momentum < 1)) {
    return InvalidArgument("epsilon must be >= 0 and momentum in [0, 1)");
  }
  return std::unique_ptr<Layer>(
      std::make_unique<BatchNormLayer>(name, epsilon, momentum, context.backend));
}

}  // namespace nn
}  // namespace pstrain
