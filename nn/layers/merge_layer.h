// MergeLayer: the base of layers that take several inputs (add, concat,
// cross, ...). The graph runs them through the Graph* forms with all their
// inputs; the one-input forms hand a lone input to those.
#ifndef PSTRAIN_NN_LAYERS_MERGE_LAYER_H_
#define PSTRAIN_NN_LAYERS_MERGE_LAYER_H_

#include <string>
#include <vector>

#include "nn/layer.h"

namespace pstrain {
namespace nn {

class MergeLayer : public Layer {
 public:
  using Layer::Layer;
  bool several_inputs() const override { return true; }
  int min_inputs() const override { return 2; }
  StatusOr<Shape> OutputShape(const Shape& in) final { return GraphOutputShape({in}); }
  Status Forward(Mode mode, const Tensor& x, const Params& params, Tensor* y) final {
    return GraphForward(mode, {&x}, params, y);
  }
  Status Backward(const Tensor& x, const Tensor& y, const Params& params, const Tensor& dy,
                  Tensor* dx, const Grads& grads) final {
    return GraphBackward({&x}, y, params, dy, {dx}, grads);
  }
};

}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_LAYERS_MERGE_LAYER_H_
