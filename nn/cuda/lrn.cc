// tf.nn.lrn on cuDNN's cross-channel LRN. cuDNN divides alpha by the window
// (y = x / (k + alpha / n * sum x^2)^beta), TensorFlow does not: cuDNN is
// given alpha * n.
#include <cudnn.h>

#include <string>

#include "nn/cuda/cuda_kernels.h"
#include "nn/cuda/cuda_status.h"
#include "nn/cuda/cudnn_descriptors.h"

namespace pstrain {
namespace nn {
namespace cuda {
namespace {

class CudaLrn : public LrnKernel {
 public:
  CudaLrn(CudaDevice* device, const LrnConfig& config) : d_(device), c_(config) {}

  Status Forward(const Tensor& x, Tensor* y) override {
    PS_RETURN_IF_ERROR(Describe(x, "lrn forward"));
    PS_RETURN_IF_ERROR(d_->Ensure(y, x.shape()));
    PS_CUDNN(cudnnLRNCrossChannelForward(d_->cudnn(), lrn_desc_.get(), CUDNN_LRN_CROSS_CHANNEL_DIM1,
                                         &kOne, desc_.get(), x.data(), &kZero, desc_.get(),
                                         y->data()));
    y_ = *y;  // cuDNN's backward pass reads the output
    return OkStatus();
  }

  Status Backward(const Tensor& x, const Tensor& dy, Tensor* dx) override {
    PS_RETURN_IF_ERROR(Describe(x, "lrn backward"));
    PS_RETURN_IF_ERROR(CheckOnDevice(d_, "lrn backward", {&dy}));
    if (dy.shape() != x.shape() || y_.shape() != x.shape()) {
      return FailedPrecondition("lrn: no forward of " + ShapeString(dy.shape()));
    }
    PS_RETURN_IF_ERROR(d_->Ensure(dx, x.shape()));
    PS_CUDNN(cudnnLRNCrossChannelBackward(
        d_->cudnn(), lrn_desc_.get(), CUDNN_LRN_CROSS_CHANNEL_DIM1, &kOne, desc_.get(), y_.data(),
        desc_.get(), dy.data(), desc_.get(), x.data(), &kZero, desc_.get(), dx->data()));
    return OkStatus();
  }

  Status Init() {
    const unsigned n = static_cast<unsigned>(2 * c_.depth_radius + 1);
    PS_ASSIGN_OR_RETURN(cudnnLRNDescriptor_t d, lrn_desc_.Get());
    PS_CUDNN(cudnnSetLRNDescriptor(d, n, static_cast<double>(c_.alpha) * n, c_.beta, c_.bias));
    return OkStatus();
  }

 private:
  Status Describe(const Tensor& x, const char* op) {
    if (x.rank() != 4)
      return InvalidArgument("lrn: input " + ShapeString(x.shape()) + " is not NHWC");
    PS_RETURN_IF_ERROR(CheckOnDevice(d_, op, {&x}));
    if (x.shape() == shape_) return OkStatus();
    PS_RETURN_IF_ERROR(SetNhwc(&desc_, x.shape()));
    shape_ = x.shape();
    return OkStatus();
  }

  CudaDevice* const d_;
  const LrnConfig c_;
  Shape shape_;
  TensorDescriptor desc_;
  LrnDescriptor lrn_desc_;
  Tensor y_;
};

}  // namespace

StatusOr<std::unique_ptr<LrnKernel>> MakeLrn(CudaDevice* device, const LrnConfig& config) {
  const int64_t n = 2 * config.depth_radius + 1;
  if (config.depth_radius < 0 || n > CUDNN_LRN_MAX_N || config.bias < CUDNN_LRN_MIN_K ||
      config.beta < CUDNN_LRN_MIN_BETA || !(config.alpha >= 0)) {
    return InvalidArgument("lrn on cuDNN: depth_radius " + std::to_string(config.depth_radius) +
                           ", bias " + std::to_string(config.bias) + ", beta " +
                           std::to_string(config.beta) + ": cuDNN takes windows of at most " +
                           std::to_string(CUDNN_LRN_MAX_N) + " channels (depth_radius <= 7), " +
                           "bias >= 1e-5 and beta >= 0.01");
  }
  auto lrn = std::make_unique<CudaLrn>(device, config);
  PS_RETURN_IF_ERROR(lrn->Init());
  return std::unique_ptr<LrnKernel>(std::move(lrn));
}

}  // namespace cuda
}  // namespace nn
}  // namespace pstrain
