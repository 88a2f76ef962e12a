// Max and average pooling layers.
#include <memory>

#include "nn/avg_pool.h"
#include "nn/layers/layers.h"
#include "nn/max_pool.h"

namespace pstrain {
namespace nn {
namespace {

class PoolLayer : public Layer {
 public:
  PoolLayer(const std::string& name, bool max, int64_t window, int64_t stride, Padding padding,
            DnnlContext* dnnl)
      : Layer(name), max_(max), window_(window), stride_(stride), padding_(padding), dnnl_(dnnl) {}

  StatusOr<Shape> OutputShape(const Shape& in) override {
    if (in.size() != 3) return InvalidArgument("input " + ShapeString(in) + " is not HWC");
    const WindowDim h = ComputeWindow(in[0], window_, stride_, padding_);
    const WindowDim w = ComputeWindow(in[1], window_, stride_, padding_);
    if (h.out <= 0 || w.out <= 0) {
      return InvalidArgument("input " + ShapeString(in) + " is smaller than the window");
    }
    if (max_) {
      max_pool_ = std::make_unique<MaxPool>(dnnl_, MaxPoolConfig{window_, stride_, padding_});
    }
    return Shape{h.out, w.out, in[2]};
  }

  Status Forward(Mode, const Tensor& x, const Params&, Tensor* y) override {
    if (max_) return max_pool_->Forward(x, y);
    return AvgPool({window_, stride_, padding_}).Forward(x, y);
  }

  Status Backward(const Tensor& x, const Tensor&, const Params&, const Tensor& dy, Tensor* dx,
                  const Grads&) override {
    if (dx == nullptr) return OkStatus();
    if (max_) return max_pool_->Backward(x.shape(), dy, dx);
    return AvgPool({window_, stride_, padding_}).Backward(x.shape(), dy, dx);
  }

 private:
  const bool max_;
  const int64_t window_, stride_;
  const Padding padding_;
  DnnlContext* const dnnl_;
  std::unique_ptr<MaxPool> max_pool_;
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
  return std::unique_ptr<Layer>(
      std::make_unique<PoolLayer>(name, max, spec.window(), stride, padding, context.dnnl));
}

}  // namespace nn
}  // namespace pstrain
