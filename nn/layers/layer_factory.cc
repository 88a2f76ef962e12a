#include "nn/layers/layers.h"

namespace pstrain {
namespace nn {

Status ApplyRelu(Backend* backend, bool relu, Tensor* y) {
  return relu ? backend->Relu(*y, y) : OkStatus();
}

StatusOr<const Tensor*> ReluGradient(Backend* backend, bool relu, const Tensor& y, const Tensor& dy,
                                     Tensor* scratch) {
  if (!relu) return &dy;
  PS_RETURN_IF_ERROR(backend->ReluGrad(y, dy, scratch));
  return scratch;
}

StatusOr<Initializer> InitializerFrom(const proto::InitializerSpec& spec, const std::string& what) {
  switch (spec.kind_case()) {
    case proto::InitializerSpec::kTruncatedNormalStddev:
      if (!(spec.truncated_normal_stddev() > 0)) {
        return InvalidArgument(what + ": truncated_normal_stddev must be > 0");
      }
      return Initializer{InitKind::kTruncatedNormal, spec.truncated_normal_stddev()};
    case proto::InitializerSpec::kConstant:
      return Initializer{InitKind::kConstant, spec.constant()};
    case proto::InitializerSpec::kVarianceScaling: {
      const proto::VarianceScalingSpec& v = spec.variance_scaling();
      if (!(v.scale() > 0)) return InvalidArgument(what + ": variance_scaling's scale must be > 0");
      return Initializer{InitKind::kVarianceScaling, v.scale(), v.mode(), v.distribution()};
    }
    case proto::InitializerSpec::KIND_NOT_SET:
      break;
  }
  return InvalidArgument(what +
                         ": no initializer (truncated_normal_stddev, constant or "
                         "variance_scaling)");
}

StatusOr<std::unique_ptr<Layer>> CreateLayer(const proto::LayerSpec& spec,
                                             const LayerContext& context) {
  const std::string& name = spec.name();
  switch (spec.kind_case()) {
    case proto::LayerSpec::kConv2D:
      return CreateConv2DLayer(name, spec.conv2d(), context);
    case proto::LayerSpec::kDense:
      return CreateDenseLayer(name, spec.dense(), context);
    case proto::LayerSpec::kMaxPool:
      return CreatePoolLayer(name, true, spec.max_pool(), context);
    case proto::LayerSpec::kAvgPool:
      return CreatePoolLayer(name, false, spec.avg_pool(), context);
    case proto::LayerSpec::kLrn:
      return CreateLrnLayer(name, spec.lrn(), context);
    case proto::LayerSpec::kBatchNorm:
      return CreateBatchNormLayer(name, spec.batch_norm(), context);
    case proto::LayerSpec::kRelu:
      return CreateReluLayer(name, context);
    case proto::LayerSpec::kActivation:
      return CreateActivationLayer(name, spec.activation(), context);
    case proto::LayerSpec::kFlatten:
      return CreateFlattenLayer(name, context);
    case proto::LayerSpec::kDropout:
      return CreateDropoutLayer(name, spec.dropout(), context);
    case proto::LayerSpec::kChannelPad:
      return CreateChannelPadLayer(name, spec.channel_pad(), context);
    case proto::LayerSpec::kAdd:
    case proto::LayerSpec::kConcat:
    case proto::LayerSpec::kMultiply:
    case proto::LayerSpec::kDotInteraction:
    case proto::LayerSpec::kCross:
    case proto::LayerSpec::kFm:
      return CreateMergeLayer(spec, context);
    case proto::LayerSpec::kEmbedding:
    case proto::LayerSpec::kEmbeddingBag:
      // The model's front (nn/sparse/embedding_front.h) runs them.
      return InvalidArgument("embedding layers must come before every other layer");
    case proto::LayerSpec::KIND_NOT_SET:
      break;
  }
  return InvalidArgument(
      "no kind (conv2d, max_pool, avg_pool, lrn, dense, relu, activation, dropout, batch_norm, "
      "flatten, embedding, embedding_bag, add, concat, multiply, dot_interaction, cross, fm or "
      "channel_pad)");
}

}  // namespace nn
}  // namespace pstrain
