// Max and average pooling layers.
#include <memory>

#include "nn/layers/layers.h"

namespace pstrain {
namespace nn {
namespace {

class PoolLayer : public Layer {
 public:
  PoolLayer(const std::string& name, bool max, const PoolConfig& config, Backend* backend)
      : Layer(name), max_(max), config_(config), backend_(backend) {}

  StatusOr<Shape> OutputShape(const Shape& in) override {
    if (in.size() != 3) return InvalidArgument("input " + ShapeString(in) + " is not HWC");
    const WindowDim h = ComputeWindow(in[0], config_.window, config_.stride, config_.padding);
    const WindowDim w = ComputeWindow(in[1], config_.window, config_.stride, config_.padding);
    if (h.out <= 0 || w.out <= 0) {
      return InvalidArgument("input " + ShapeString(in) + " is smaller than the window");
    }
    if (max_) {
      PS_ASSIGN_OR_RETURN(pool_, backend_->MaxPool(config_));
    } else {
      PS_ASSIGN_OR_RETURN(pool_, backend_->AvgPool(config_));
    }
    return Shape{h.out, w.out, in[2]};
  }

  Status Forward(Mode mode, const Tensor& x, const Params&, Tensor* y) override {
    return mode == Mode::kInference ? pool_->Infer(x, y) : pool_->Forward(x, y);
  }

  Status Backward(const Tensor& x, const Tensor&, const Params&, const Tensor& dy, Tensor* dx,
                  const Grads&) override {
    return dx == nullptr ? OkStatus() : pool_->Backward(x.shape(), dy, dx);
  }

 private:
  const bool max_;
  const PoolConfig config_;
  Backend* const backend_;
  std::unique_ptr<PoolKernel> pool_;
};

}  // namespace

StatusOr<std::unique_ptr<Layer>> CreatePoolLayer(const std::string& name, bool max,
                                                 const proto::PoolSpec& spec,
                                                 const LayerContext& context) {
  if (spec.window() <= 0 || spec.stride() < 0) {
    return InvalidArgument("window must be > 0, stride >= 0");
  }
  const int64_t stride = spec.stride() > 0 ? spec.stride() : spec.window();
  const Padding padding = spec.padding() == proto::VALID ? Padding::kValid : Padding::kSame;
  return std::unique_ptr<Layer>(std::make_unique<PoolLayer>(
      name, max, PoolConfig{spec.window(), stride, padding}, context.backend));
}

}  // namespace nn
}  // namespace pstrain
