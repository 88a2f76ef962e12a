// Layer: one step of a network described as data (proto/model.proto), with
// the variables it owns. A model (nn/graph_model.h) runs its layers as a
// graph: each reads the outputs of the layers it names (the previous one's,
// in a chain).
//
// Shapes: a layer computes one example's output shape from its input shape
// (no batch axis); Forward and Backward take whole batches, NHWC, the batch
// first. Most layers take one input; those of several (add, concat, ...;
// nn/layers/merge_layers.h) are called through the Graph* forms, which the
// model calls for every layer.
//
// Thread safety: a layer keeps scratch state between Forward and Backward
// (oneDNN plans, a dropout mask): one thread at a time.
#ifndef PSTRAIN_NN_LAYER_H_
#define PSTRAIN_NN_LAYER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "nn/model.h"

namespace pstrain {
namespace nn {

enum class Mode { kTraining, kInference };

// The most elements a variable of a model may have (16 GiB of float32).
constexpr int64_t kMaxVariableElements = int64_t{1} << 32;

// A layer's own variables, in the order its Variables() lists them.
using Params = std::vector<const Tensor*>;
using Grads = std::vector<Tensor*>;

class Layer {
 public:
  explicit Layer(std::string name) : name_(std::move(name)) {}
  virtual ~Layer() = default;
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;

  const std::string& name() const { return name_; }
  // The variables this layer owns, named "<name>/...", with their
  // initializers and weight decay. Valid after OutputShape succeeded once
  // (a dense layer learns its input size from it).
  virtual std::vector<VariableSpec> Variables() const { return {}; }
  // One example's output shape for an input of shape `in`; InvalidArgument
  // when the input does not fit the layer.
  virtual StatusOr<Shape> OutputShape(const Shape& in) = 0;
  // y from x; y is resized.
  virtual Status Forward(Mode mode, const Tensor& x, const Params& params, Tensor* y) = 0;
  // After Forward(kTraining) of x giving y: dx (skipped when null) and, for
  // each variable, its gradient (a non-trainable one: the assign_sub delta
  // its owner applies), all resized.
  virtual Status Backward(const Tensor& x, const Tensor& y, const Params& params, const Tensor& dy,
                          Tensor* dx, const Grads& grads) = 0;

  // How many inputs the layer takes: 1, or at least min_inputs().
  virtual bool several_inputs() const { return false; }
  virtual int min_inputs() const { return 1; }
  // The same three for a layer's inputs in order (one for most layers,
  // whose own forms these call): the shape of each, the batch of each, and
  // into dxs[i] (skipped when null) each one's gradient.
  virtual StatusOr<Shape> GraphOutputShape(const std::vector<Shape>& in) {
    return OutputShape(in.at(0));
  }
  virtual Status GraphForward(Mode mode, const std::vector<const Tensor*>& xs, const Params& params,
                              Tensor* y) {
    return Forward(mode, *xs.at(0), params, y);
  }
  virtual Status GraphBackward(const std::vector<const Tensor*>& xs, const Tensor& y,
                               const Params& params, const Tensor& dy,
                               const std::vector<Tensor*>& dxs, const Grads& grads) {
    return Backward(*xs.at(0), y, params, dy, dxs.at(0), grads);
  }

 private:
  const std::string name_;
};

}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_LAYER_H_
