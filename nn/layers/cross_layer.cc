// DCN-v2's cross layer (Wang et al. 2021, eq. 1): x0 * (x W + b) + x,
// element by element, on the Dense kernel for x W + b.
#include <cmath>
#include <memory>

#include "nn/cpu/tensor_util.h"
#include "nn/layers/layers.h"
#include "nn/layers/merge_layer.h"

namespace pstrain {
namespace nn {
namespace {

class CrossLayer : public MergeLayer {
 public:
  CrossLayer(const std::string& name, const proto::CrossSpec& spec, Backend* backend)
      : MergeLayer(name), spec_(spec), backend_(backend) {}
  // [x0, x], or [x] alone as both.
  int min_inputs() const override { return 1; }

  std::vector<VariableSpec> Variables() const override {
    return {{name() + "/kernel", {d_, d_}, weights_init_, true, spec_.weight_decay()},
            {name() + "/bias", {d_}, Initializer{InitKind::kConstant, 0.0f}}};
  }

  StatusOr<Shape> GraphOutputShape(const std::vector<Shape>& in) override {
    if (in.size() > 2) {
      return InvalidArgument("takes [x0, x] or [x], not " + std::to_string(in.size()) + " inputs");
    }
    d_ = NumElements(in.back());
    if (d_ <= 0) return InvalidArgument("empty input " + ShapeString(in.back()));
    if (NumElements(in[0]) != d_) {
      return InvalidArgument("inputs of shapes " + ShapeString(in[0]) + " and " +
                             ShapeString(in[1]) +
                             " do not meet: x0 and x must have as many values");
    }
    if (spec_.has_weights_initializer()) {
      PS_ASSIGN_OR_RETURN(weights_init_,
                          InitializerFrom(spec_.weights_initializer(), "weights_initializer"));
    } else {
      weights_init_ = {InitKind::kTruncatedNormal, 1.0f / std::sqrt(static_cast<float>(d_))};
    }
    PS_ASSIGN_OR_RETURN(dense_, backend_->Dense(d_, d_));
    return Shape{d_};
  }

  Status GraphForward(Mode, const std::vector<const Tensor*>& xs, const Params& p,
                      Tensor* y) override {
    const Tensor& x0 = *xs[0];
    const Tensor& x = *xs.back();
    PS_RETURN_IF_ERROR(dense_->Forward(x, *p[0], *p[1], &u_));
    cpu::EnsureShape(y, u_.shape());
    for (int64_t i = 0; i < u_.size(); ++i) (*y)[i] = x0[i] * u_[i] + x[i];
    return OkStatus();
  }

  // du = dy * x0; dx = du W^T + dy; dx0 = dy * u (both, when x0 is x).
  Status GraphBackward(const std::vector<const Tensor*>& xs, const Tensor&, const Params& p,
                       const Tensor& dy, const std::vector<Tensor*>& dxs, const Grads& g) override {
    const Tensor& x0 = *xs[0];
    const Tensor& x = *xs.back();
    cpu::EnsureShape(&du_, dy.shape());
    for (int64_t i = 0; i < dy.size(); ++i) du_[i] = dy[i] * x0[i];
    Tensor* dx = dxs.back();
    PS_RETURN_IF_ERROR(dense_->Backward(x, *p[0], du_, dx, g[0], g[1]));
    if (dx != nullptr) {
      const bool one_input = xs.size() == 1;
      for (int64_t i = 0; i < dy.size(); ++i) {
        (*dx)[i] += dy[i] + (one_input ? dy[i] * u_[i] : 0.0f);
      }
    }
    if (xs.size() == 2 && dxs[0] != nullptr) {
      cpu::EnsureShape(dxs[0], x0.shape());
      for (int64_t i = 0; i < dy.size(); ++i) (*dxs[0])[i] = dy[i] * u_[i];
    }
    return OkStatus();
  }

 private:
  const proto::CrossSpec spec_;
  Backend* const backend_;
  int64_t d_ = 0;
  Initializer weights_init_{InitKind::kTruncatedNormal, 1.0f};
  std::unique_ptr<AffineKernel> dense_;
  Tensor u_, du_;  // x W + b of the latest Forward; its gradient
};

}  // namespace

StatusOr<std::unique_ptr<Layer>> CreateCrossLayer(const std::string& name,
                                                  const proto::CrossSpec& spec,
                                                  const LayerContext& context) {
  if (spec.weight_decay() < 0) return InvalidArgument("weight_decay must be >= 0");
  return std::unique_ptr<Layer>(std::make_unique<CrossLayer>(name, spec, context.backend));
}

}  // namespace nn
}  // namespace pstrain
