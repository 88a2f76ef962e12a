// conv2d (+ bias) (+ ReLU) on the Conv2D kernel.
#include <memory>

#include "nn/layers/layers.h"

namespace pstrain {
namespace nn {
namespace {

class Conv2DLayer : public Layer {
 public:
  Conv2DLayer(const std::string& name, const proto::Conv2DSpec& spec, Initializer weights_init,
              Initializer biases_init, const LayerContext& context)
      : Layer(name),
        spec_(spec),
        naming_(context.naming),
        weights_init_(weights_init),
        biases_init_(biases_init),
        backend_(context.backend) {}

  std::vector<VariableSpec> Variables() const override {
    const int64_t k = spec_.kernel_size();
    std::vector<VariableSpec> vars = {{KernelName(name(), naming_),
                                       {k, k, in_channels_, spec_.filters()},
                                       weights_init_,
                                       true,
                                       spec_.weight_decay()}};
    if (!spec_.no_bias())
      vars.push_back({BiasName(name(), naming_), {spec_.filters()}, biases_init_});
    return vars;
  }

  StatusOr<Shape> OutputShape(const Shape& in) override {
    if (in.size() != 3) return InvalidArgument("input " + ShapeString(in) + " is not HWC");
    in_channels_ = in[2];
    const int64_t stride = spec_.stride() > 0 ? spec_.stride() : 1;
    const Padding padding = spec_.padding() == proto::VALID ? Padding::kValid : Padding::kSame;
    const int64_t k = spec_.kernel_size();
    const WindowDim h = ComputeWindow(in[0], k, stride, padding);
    const WindowDim w = ComputeWindow(in[1], k, stride, padding);
    if (h.out <= 0 || w.out <= 0) {
      return InvalidArgument("input " + ShapeString(in) + " is smaller than the kernel");
    }
    // The weights must be a tensor pstrain can hold before a kernel is
    // planned for them (SAME padding takes any kernel size).
    const Shape weights = {k, k, in[2], spec_.filters()};
    auto count = CheckedNumElements(weights);
    if (!count.ok() || *count > kMaxVariableElements) {
      return InvalidArgument("weights " + ShapeString(weights) + " are too large");
    }
    PS_ASSIGN_OR_RETURN(conv_, backend_->Conv2D({k, k, in[2], spec_.filters(), stride, padding}));
    if (spec_.no_bias()) {
      PS_ASSIGN_OR_RETURN(zero_bias_, backend_->Zeros({spec_.filters()}));
    }
    return Shape{h.out, w.out, spec_.filters()};
  }

  Status Forward(Mode, const Tensor& x, const Params& p, Tensor* y) override {
    PS_RETURN_IF_ERROR(conv_->Forward(x, *p[0], spec_.no_bias() ? zero_bias_ : *p[1], y));
    return ApplyRelu(backend_, spec_.relu(), y);
  }

  Status Backward(const Tensor& x, const Tensor& y, const Params& p, const Tensor& dy, Tensor* dx,
                  const Grads& g) override {
    PS_ASSIGN_OR_RETURN(const Tensor* dz, ReluGradient(backend_, spec_.relu(), y, dy, &dz_));
    return conv_->Backward(x, *p[0], *dz, dx, g[0], spec_.no_bias() ? &unused_db_ : g[1]);
  }

 private:
  const proto::Conv2DSpec spec_;
  const proto::VariableNaming naming_;
  const Initializer weights_init_, biases_init_;
  Backend* const backend_;
  Tensor zero_bias_;  // the kernel's bias when the layer has none
  int64_t in_channels_ = 0;
  std::unique_ptr<AffineKernel> conv_;
  Tensor dz_, unused_db_;
};

}  // namespace

StatusOr<std::unique_ptr<Layer>> CreateConv2DLayer(const std::string& name,
                                                   const proto::Conv2DSpec& spec,
                                                   const LayerContext& context) {
  if (spec.filters() <= 0 || spec.kernel_size() <= 0 || spec.stride() < 0) {
    return InvalidArgument("filters and kernel_size must be > 0, stride >= 0");
  }
  if (spec.weight_decay() < 0) return InvalidArgument("weight_decay must be >= 0");
  PS_ASSIGN_OR_RETURN(Initializer w,
                      InitializerFrom(spec.weights_initializer(), "weights_initializer"));
  Initializer b{InitKind::kConstant, 0.0f};
  if (!spec.no_bias()) {
    PS_ASSIGN_OR_RETURN(b, InitializerFrom(spec.biases_initializer(), "biases_initializer"));
  }
  return std::unique_ptr<Layer>(std::make_unique<Conv2DLayer>(name, spec, w, b, context));
}

}  // namespace nn
}  // namespace pstrain
