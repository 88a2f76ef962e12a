// x w + b (+ ReLU) over the flattened input, on the Dense kernel.
#include <memory>

#include "nn/layers/layers.h"

namespace pstrain {
namespace nn {
namespace {

class DenseLayer : public Layer {
 public:
  DenseLayer(const std::string& name, const proto::DenseSpec& spec, Initializer weights_init,
             Initializer biases_init, const LayerContext& context)
      : Layer(name),
        spec_(spec),
        naming_(context.naming),
        weights_init_(weights_init),
        biases_init_(biases_init),
        backend_(context.backend) {}

  std::vector<VariableSpec> Variables() const override {
    return {{KernelName(name(), naming_),
             {in_, spec_.units()},
             weights_init_,
             true,
             spec_.weight_decay()},
            {BiasName(name(), naming_), {spec_.units()}, biases_init_}};
  }

  StatusOr<Shape> OutputShape(const Shape& in) override {
    in_ = NumElements(in);
    if (in_ <= 0) return InvalidArgument("empty input " + ShapeString(in));
    PS_ASSIGN_OR_RETURN(dense_, backend_->Dense(in_, spec_.units()));
    return Shape{spec_.units()};
  }

  Status Forward(Mode, const Tensor& x, const Params& p, Tensor* y) override {
    PS_RETURN_IF_ERROR(dense_->Forward(x, *p[0], *p[1], y));
    return ApplyRelu(backend_, spec_.relu(), y);
  }

  Status Backward(const Tensor& x, const Tensor& y, const Params& p, const Tensor& dy, Tensor* dx,
                  const Grads& g) override {
    PS_ASSIGN_OR_RETURN(const Tensor* dz, ReluGradient(backend_, spec_.relu(), y, dy, &dz_));
    return dense_->Backward(x, *p[0], *dz, dx, g[0], g[1]);
  }

 private:
  const proto::DenseSpec spec_;
  const proto::VariableNaming naming_;
  const Initializer weights_init_, biases_init_;
  Backend* const backend_;
  int64_t in_ = 0;
  std::unique_ptr<AffineKernel> dense_;
  Tensor dz_;
};

}  // namespace

StatusOr<std::unique_ptr<Layer>> CreateDenseLayer(const std::string& name,
                                                  const proto::DenseSpec& spec,
                                                  const LayerContext& context) {
  if (spec.units() <= 0) return InvalidArgument("units must be > 0");
  if (spec.weight_decay() < 0) return InvalidArgument("weight_decay must be >= 0");
  PS_ASSIGN_OR_RETURN(Initializer w,
                      InitializerFrom(spec.weights_initializer(), "weights_initializer"));
  PS_ASSIGN_OR_RETURN(Initializer b,
                      InitializerFrom(spec.biases_initializer(), "biases_initializer"));
  return std::unique_ptr<Layer>(std::make_unique<DenseLayer>(name, spec, w, b, context));
}

}  // namespace nn
}  // namespace pstrain
