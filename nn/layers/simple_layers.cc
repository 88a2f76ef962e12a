// Layers without variables: LRN, ReLU, sigmoid and tanh, flatten, dropout
// and channel padding.
#include <cmath>
#include <memory>

#include "core/fnv1a.h"
#include "nn/cpu/tensor_util.h"
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

// Sigmoid or tanh, on the CPU; each one's derivative is a function of its
// output: y (1 - y) and 1 - y^2.
class ActivationLayer : public Layer {
 public:
  ActivationLayer(const std::string& name, proto::ActivationSpec::Function function)
      : Layer(name), sigmoid_(function == proto::ActivationSpec::SIGMOID) {}
  StatusOr<Shape> OutputShape(const Shape& in) override { return in; }
  Status Forward(Mode, const Tensor& x, const Params&, Tensor* y) override {
    cpu::EnsureShape(y, x.shape());
    const float* in = x.data();
    float* out = y->data();
    if (sigmoid_) {
      for (int64_t i = 0; i < x.size(); ++i) out[i] = 1.0f / (1.0f + std::exp(-in[i]));
    } else {
      for (int64_t i = 0; i < x.size(); ++i) out[i] = std::tanh(in[i]);
    }
    return OkStatus();
  }
  Status Backward(const Tensor&, const Tensor& y, const Params&, const Tensor& dy, Tensor* dx,
                  const Grads&) override {
    if (dx == nullptr) return OkStatus();
    cpu::EnsureShape(dx, y.shape());
    const float* out = y.data();
    const float* d = dy.data();
    float* g = dx->data();
    if (sigmoid_) {
      for (int64_t i = 0; i < y.size(); ++i) g[i] = d[i] * out[i] * (1.0f - out[i]);
    } else {
      for (int64_t i = 0; i < y.size(); ++i) g[i] = d[i] * (1.0f - out[i] * out[i]);
    }
    return OkStatus();
  }

 private:
  const bool sigmoid_;
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

// Zeros before and after the channels of each position: the shortcut of
// a ResNet block that widens its input (He et al.'s option A, as
// tf_cnn_benchmarks pads its CIFAR ResNets).
class ChannelPadLayer : public Layer {
 public:
  ChannelPadLayer(const std::string& name, int64_t before, int64_t after)
      : Layer(name), before_(before), after_(after) {}
  StatusOr<Shape> OutputShape(const Shape& in) override {
    if (in.empty()) return InvalidArgument("a scalar input has no channels");
    Shape out = in;
    out.back() += before_ + after_;
    return out;
  }
  Status Forward(Mode, const Tensor& x, const Params&, Tensor* y) override {
    const int64_t c = x.shape().back(), wide = c + before_ + after_;
    Shape shape = x.shape();
    shape.back() = wide;
    cpu::EnsureShape(y, shape);
    y->Fill(0.0f);
    for (int64_t at = 0; at < x.size() / c; ++at) {
      std::copy(x.data() + at * c, x.data() + (at + 1) * c, y->data() + at * wide + before_);
    }
    return OkStatus();
  }
  Status Backward(const Tensor& x, const Tensor&, const Params&, const Tensor& dy, Tensor* dx,
                  const Grads&) override {
    if (dx == nullptr) return OkStatus();
    const int64_t c = x.shape().back(), wide = c + before_ + after_;
    cpu::EnsureShape(dx, x.shape());
    for (int64_t at = 0; at < x.size() / c; ++at) {
      const float* from = dy.data() + at * wide + before_;
      std::copy(from, from + c, dx->data() + at * c);
    }
    return OkStatus();
  }

 private:
  const int64_t before_, after_;
};

}  // namespace

StatusOr<std::unique_ptr<Layer>> CreateChannelPadLayer(const std::string& name,
                                                       const proto::ChannelPadSpec& spec,
                                                       const LayerContext& context) {
  if (spec.before() < 0 || spec.after() < 0)
    return InvalidArgument("before and after must be >= 0");
  if (context.backend->memory() != nullptr) {
    return InvalidArgument("runs on the CPU only, not on " + context.backend->Describe());
  }
  return std::unique_ptr<Layer>(
      std::make_unique<ChannelPadLayer>(name, spec.before(), spec.after()));
}

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

StatusOr<std::unique_ptr<Layer>> CreateActivationLayer(const std::string& name,
                                                       const proto::ActivationSpec& spec,
                                                       const LayerContext& context) {
  if (context.backend->memory() != nullptr) {
    return InvalidArgument("runs on the CPU only, not on " + context.backend->Describe());
  }
  return std::unique_ptr<Layer>(std::make_unique<ActivationLayer>(name, spec.function()));
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
