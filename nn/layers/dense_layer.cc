// x w + b (+ ReLU) over the flattened input, on the Dense kernel.
#include <memory>

#include "nn/dense.h"
#include "nn/layers/layers.h"

namespace pstrain {
namespace nn {
namespace {

class DenseLayer : public Layer {
 public:
  DenseLayer(const std::string& name, const proto::DenseSpec& spec, Initializer weights_init,
             Initializer biases_init, DnnlContext* dnnl)
      : Layer(name), spec_(spec), weights_init_(weights_init), biases_init_(biases_init),
        dnnl_(dnnl) {}

  std::vector<VariableSpec> Variables() const override {
    return {{name() + "/weights", {in_, spec_.units()}, weights_init_, true, spec_.weight_decay()},
            {name() + "/biases", {spec_.units()}, biases_init_}};
  }

  StatusOr<Shape> OutputShape(const Shape& in) override {
    in_ = NumElements(in);
    if (in_ <= 0) return InvalidArgument("empty input " + ShapeString(in));
    dense_ = std::make_unique<Dense>(dnnl_, in_, spec_.units());
    return Shape{spec_.units()};
  }

  Status Forward(Mode, const Tensor& x, const Params& p, Tensor* y) override {
    PS_RETURN_IF_ERROR(dense_->Forward(x, *p[0], *p[1], y));
    ApplyRelu(spec_.relu(), y);
    return OkStatus();
  }

  Status Backward(const Tensor& x, const Tensor& y, const Params& p, const Tensor& dy, Tensor* dx,
                  const Grads& g) override {
    const Tensor& dz = ReluGradient(spec_.relu(), y, dy, &dz_);
    return dense_->Backward(x, *p[0], dz, dx, g[0], g[1]);
  }

 private:
  const proto::DenseSpec spec_;
  const Initializer weights_init_, biases_init_;
  DnnlContext* const dnnl_;
  int64_t in_ = 0;
  std::unique_ptr<Dense> dense_;
  Tensor dz_;
};

}  // namespace

StatusOr<std::unique_ptr<Layer>> CreateDenseLayer(const std::string& name,
                                                  const proto::DenseSpec& spec,
                                                  const LayerContext& context) {
  if (spec.units() <= 0) return InvalidArgument("units must be > 0");
  if (spec.weight_decay() < 0) return InvalidArgument("weight_decay must be >= 0");
  PS_ASSIGN_OR_RETURN(Initializer w, InitializerFrom(spec.weights_initializer(), "weights_initializer"));
  PS_ASSIGN_OR_RETURN(Initializer b, InitializerFrom(spec.biases_initializer(), "biases_initializer"));
  return std::unique_ptr<Layer>(std::make_unique<DenseLayer>(name, spec, w, b, context.dnnl));
}

}  // namespace nn
}  // namespace pstrain
