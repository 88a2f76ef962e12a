// Layers without variables: LRN, ReLU, flatten and dropout.
#include <memory>

#include "core/fnv1a.h"
#include "nn/layers/layers.h"

namespace pstrain {
namespace nn {
namespace {

class LrnLayer : public Layer {
 public:
  LrnLayer(const std::string& name, std::unique_ptr<LrnKernel> lrn)
      : Layer(name), lrn_(std::move(lrn)) {}
  StatusOr<Shape> OutputShape(const Shape& in) override {
    if (in.size() != 3) return InvalidArgument("input " + ShapeString(in) + " is not HWC");
    return in;
  }
  Status Forward(Mode, const Tensor& x, const Params&, Tensor* y) override {
    return lrn_->Forward(x, y);
  }
  Status Backward(const Tensor& x, const Tensor&, const Params&, const Tensor& dy, Tensor* dx,
                  const Grads&) override {
    return dx == nullptr ? OkStatus() : lrn_->Backward(x, dy, dx);
  }

 private:
  const std::unique_ptr<LrnKernel> lrn_;
};

class ReluLayer : public Layer {
 public:
  ReluLayer(const std::string& name, Backend* backend) : Layer(name), backend_(backend) {}
  StatusOr<Shape> OutputShape(const Shape& in) override { return in; }
  Status Forward(Mode, const Tensor& x, const Params&, Tensor* y) override {
    return backend_->Relu(x, y);
  }
  Status Backward(const Tensor&, const Tensor& y, const Params&, const Tensor& dy, Tensor* dx,
                  const Grads&) override {
    return dx == nullptr ? OkStatus() : backend_->ReluGrad(y, dy, dx);
  }

 private:
  Backend* const backend_;
};

class FlattenLayer : public Layer {
 public:
  FlattenLayer(const std::string& name, Backend* backend) : Layer(name), backend_(backend) {}
  StatusOr<Shape> OutputShape(const Shape& in) override { return Shape{NumElements(in)}; }
  Status Forward(Mode, const Tensor& x, const Params&, Tensor* y) override {
    return backend_->CopyAs(x, {x.dim(0), x.size() / std::max<int64_t>(x.dim(0), 1)}, y);
  }
  Status Backward(const Tensor& x, const Tensor&, const Params&, const Tensor& dy, Tensor* dx,
                  const Grads&) override {
    return dx == nullptr ? OkStatus() : backend_->CopyAs(dy, x.shape(), dx);
  }

 private:
  Backend* const backend_;
};

class DropoutLayer : public Layer {
 public:
  DropoutLayer(const std::string& name, std::unique_ptr<DropoutKernel> dropout, Backend* backend)
      : Layer(name), dropout_(std::move(dropout)), backend_(backend) {}
  StatusOr<Shape> OutputShape(const Shape& in) override { return in; }
  Status Forward(Mode mode, const Tensor& x, const Params&, Tensor* y) override {
    if (mode == Mode::kTraining) return dropout_->Forward(x, y);
    return backend_->CopyAs(x, x.shape(), y);
  }
  Status Backward(const Tensor&, const Tensor&, const Params&, const Tensor& dy, Tensor* dx,
                  const Grads&) override {
    return dx == nullptr ? OkStatus() : dropout_->Backward(dy, dx);
  }

 private:
  const std::unique_ptr<DropoutKernel> dropout_;
  Backend* const backend_;
};

}  // namespace

StatusOr<std::unique_ptr<Layer>> CreateLrnLayer(const std::string& name, const proto::LrnSpec& spec,
                                                const LayerContext& context) {
  PS_ASSIGN_OR_RETURN(
      std::unique_ptr<LrnKernel> lrn,
      context.backend->Lrn({spec.depth_radius(), spec.bias(), spec.alpha(), spec.beta()}));
  return std::unique_ptr<Layer>(std::make_unique<LrnLayer>(name, std::move(lrn)));
}

std::unique_ptr<Layer> CreateReluLayer(const std::string& name, const LayerContext& context) {
  return std::make_unique<ReluLayer>(name, context.backend);
}

std::unique_ptr<Layer> CreateFlattenLayer(const std::string& name, const LayerContext& context) {
  return std::make_unique<FlattenLayer>(name, context.backend);
}

StatusOr<std::unique_ptr<Layer>> CreateDropoutLayer(const std::string& name,
                                                    const proto::DropoutSpec& spec,
                                                    const LayerContext& context) {
  // Each dropout layer draws its own masks: the seed mixes in its name.
  PS_ASSIGN_OR_RETURN(std::unique_ptr<DropoutKernel> dropout,
                      context.backend->Dropout(spec.keep_prob(), context.seed ^ Fnv1a64(name)));
  return std::unique_ptr<Layer>(
      std::make_unique<DropoutLayer>(name, std::move(dropout), context.backend));
}

}  // namespace nn
}  // namespace pstrain
