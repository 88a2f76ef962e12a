// The layers a ModelSpec names (proto/model.proto), made from their specs.
#ifndef PSTRAIN_NN_LAYERS_LAYERS_H_
#define PSTRAIN_NN_LAYERS_LAYERS_H_

#include <cstdint>
#include <memory>

#include "core/status.h"
#include "nn/backend.h"
#include "nn/layer.h"
#include "nn/variable_names.h"
#include "proto/model.pb.h"

namespace pstrain {
namespace nn {

// What every layer of one model shares.
struct LayerContext {
  Backend* backend = nullptr;                       // borrowed; outlives the layers
  uint64_t seed = 0;                                // dropout masks
  proto::VariableNaming naming = proto::TF_LAYERS;  // nn/variable_names.h
};

// The layer `spec` describes. InvalidArgument naming the layer for a spec
// without a kind or with a value out of range (a kernel of size 0, a
// keep_prob of 2, ...).
StatusOr<std::unique_ptr<Layer>> CreateLayer(const proto::LayerSpec& spec,
                                             const LayerContext& context);

// Factories of each kind, used by CreateLayer; each checks its spec.
StatusOr<std::unique_ptr<Layer>> CreateConv2DLayer(const std::string& name,
                                                   const proto::Conv2DSpec& spec,
                                                   const LayerContext& context);
StatusOr<std::unique_ptr<Layer>> CreateDenseLayer(const std::string& name,
                                                  const proto::DenseSpec& spec,
                                                  const LayerContext& context);
StatusOr<std::unique_ptr<Layer>> CreatePoolLayer(const std::string& name, bool max,
                                                 const proto::PoolSpec& spec,
                                                 const LayerContext& context);
StatusOr<std::unique_ptr<Layer>> CreateLrnLayer(const std::string& name, const proto::LrnSpec& spec,
                                                const LayerContext& context);
StatusOr<std::unique_ptr<Layer>> CreateBatchNormLayer(const std::string& name,
                                                      const proto::BatchNormSpec& spec,
                                                      const LayerContext& context);
std::unique_ptr<Layer> CreateReluLayer(const std::string& name, const LayerContext& context);
// Sigmoid or tanh, on the CPU only.
StatusOr<std::unique_ptr<Layer>> CreateActivationLayer(const std::string& name,
                                                       const proto::ActivationSpec& spec,
                                                       const LayerContext& context);
std::unique_ptr<Layer> CreateFlattenLayer(const std::string& name, const LayerContext& context);
StatusOr<std::unique_ptr<Layer>> CreateDropoutLayer(const std::string& name,
                                                    const proto::DropoutSpec& spec,
                                                    const LayerContext& context);
StatusOr<std::unique_ptr<Layer>> CreateChannelPadLayer(const std::string& name,
                                                       const proto::ChannelPadSpec& spec,
                                                       const LayerContext& context);
// Layers of several inputs (add, concat, multiply, dot_interaction, fm,
// cross), on the CPU only.
StatusOr<std::unique_ptr<Layer>> CreateMergeLayer(const proto::LayerSpec& spec,
                                                  const LayerContext& context);
StatusOr<std::unique_ptr<Layer>> CreateCrossLayer(const std::string& name,
                                                  const proto::CrossSpec& spec,
                                                  const LayerContext& context);

// A weighted layer's fused ReLU: ApplyRelu runs it on the layer's output in
// place; ReluGradient gives d(loss)/d(pre-activation) from the output y and
// dy, in *scratch when the ReLU is on, or dy itself when it is off.
Status ApplyRelu(Backend* backend, bool relu, Tensor* y);
StatusOr<const Tensor*> ReluGradient(Backend* backend, bool relu, const Tensor& y, const Tensor& dy,
                                     Tensor* scratch);

// Initializer from its spec; InvalidArgument naming `what` when unset or
// negative.
StatusOr<Initializer> InitializerFrom(const proto::InitializerSpec& spec, const std::string& what);

}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_LAYERS_LAYERS_H_
