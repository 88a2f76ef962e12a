// tf.layers.batch_normalization on cuDNN's spatial batch norm (one mean and
// variance per channel over N x H x W). cuDNN keeps the batch's mean and
// 1 / sqrt(variance + epsilon) for the backward pass; the moving averages'
// deltas are the backend's own kernel, from the variance with Bessel's
// correction as TensorFlow's moving variance takes it.
#include <cudnn.h>

#include "nn/cuda/cuda_kernels.h"
#include "nn/cuda/cuda_status.h"
#include "nn/cuda/cudnn_descriptors.h"
#include "nn/cuda/elementwise_kernels.h"

namespace pstrain {
namespace nn {
namespace cuda {
namespace {

constexpr cudnnBatchNormMode_t kMode = CUDNN_BATCHNORM_SPATIAL;

class CudaBatchNorm : public BatchNormKernel {
 public:
  CudaBatchNorm(CudaDevice* device, const BatchNormConfig& config) : d_(device), c_(config) {}

  Status ForwardTraining(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                         Tensor* y) override {
    PS_RETURN_IF_ERROR(Describe(x, {&gamma, &beta}));
    PS_RETURN_IF_ERROR(CheckOnDevice(d_, "batch norm", {&x, &gamma, &beta}));
    PS_RETURN_IF_ERROR(d_->Ensure(y, x.shape()));
    PS_RETURN_IF_ERROR(d_->Ensure(&mean_, {c_.channels}));
    PS_RETURN_IF_ERROR(d_->Ensure(&inv_std_, {c_.channels}));
    // No running averages here: the ps applies them from the deltas.
    PS_CUDNN(cudnnBatchNormalizationForwardTraining(
        d_->cudnn(), kMode, &kOne, &kZero, desc_.get(), x.data(), desc_.get(), y->data(),
        param_desc_.get(), gamma.data(), beta.data(), 0.0, nullptr, nullptr, c_.epsilon,
        mean_.data(), inv_std_.data()));
    x_ = x;  // cuDNN's backward pass reads the input
    per_channel_ = x.size() / c_.channels;
    return OkStatus();
  }

  Status ForwardInference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                          const Tensor& moving_mean, const Tensor& moving_variance,
                          Tensor* y) override {
    PS_RETURN_IF_ERROR(Describe(x, {&gamma, &beta, &moving_mean, &moving_variance}));
    PS_RETURN_IF_ERROR(
        CheckOnDevice(d_, "batch norm", {&x, &gamma, &beta, &moving_mean, &moving_variance}));
    PS_RETURN_IF_ERROR(d_->Ensure(y, x.shape()));
    PS_CUDNN(cudnnBatchNormalizationForwardInference(
        d_->cudnn(), kMode, &kOne, &kZero, desc_.get(), x.data(), desc_.get(), y->data(),
        param_desc_.get(), gamma.data(), beta.data(), moving_mean.data(), moving_variance.data(),
        c_.epsilon));
    return OkStatus();
  }

  Status Backward(const Tensor& gamma, const Tensor& dy, Tensor* dx, Tensor* dgamma,
                  Tensor* dbeta) override {
    if (per_channel_ == 0 || dy.shape() != x_.shape()) {
      return FailedPrecondition("batch norm: no training forward of " + ShapeString(dy.shape()));
    }
    PS_RETURN_IF_ERROR(Describe(x_, {&gamma}));
    PS_RETURN_IF_ERROR(CheckOnDevice(d_, "batch norm backward", {&gamma, &dy}));
    PS_RETURN_IF_ERROR(d_->Ensure(dgamma, {c_.channels}));
    PS_RETURN_IF_ERROR(d_->Ensure(dbeta, {c_.channels}));
    Tensor* target = dx;
    if (dx->data() == dy.data() && dx->device() == dy.device()) {
      target = &grad_;  // cuDNN does not promise in-place; copied below
    }
    PS_RETURN_IF_ERROR(d_->Ensure(target, dy.shape()));
    PS_CUDNN(cudnnBatchNormalizationBackward(
        d_->cudnn(), kMode, &kOne, &kZero, &kOne, &kZero, desc_.get(), x_.data(), desc_.get(),
        dy.data(), desc_.get(), target->data(), param_desc_.get(), gamma.data(), dgamma->data(),
        dbeta->data(), c_.epsilon, mean_.data(), inv_std_.data()));
    if (target != dx) *dx = grad_;
    return OkStatus();
  }

  Status MovingAverageDeltas(const Tensor& moving_mean, const Tensor& moving_variance,
                             Tensor* mean_delta, Tensor* variance_delta) override {
    if (per_channel_ == 0) return FailedPrecondition("batch norm: no training forward yet");
    if (moving_mean.shape() != Shape{c_.channels} ||
        moving_variance.shape() != Shape{c_.channels}) {
      return InvalidArgument("batch norm: moving statistics " + ShapeString(moving_mean.shape()) +
                             " and " + ShapeString(moving_variance.shape()));
    }
    PS_RETURN_IF_ERROR(CheckOnDevice(d_, "batch norm deltas", {&moving_mean, &moving_variance}));
    PS_RETURN_IF_ERROR(d_->Ensure(mean_delta, {c_.channels}));
    PS_RETURN_IF_ERROR(d_->Ensure(variance_delta, {c_.channels}));
    const double m = static_cast<double>(per_channel_);
    const double bessel = per_channel_ > 1 ? m / (m - 1) : 1.0;
    return cuda::MovingAverageDeltas(
        moving_mean.data(), moving_variance.data(), mean_.data(), inv_std_.data(), c_.epsilon,
        bessel, c_.momentum, mean_delta->data(), variance_delta->data(), c_.channels, d_->stream());
  }

 private:
  Status Describe(const Tensor& x, std::initializer_list<const Tensor*> params) {
    if (x.rank() < 2 || x.dim(x.rank() - 1) != c_.channels) {
      return InvalidArgument("batch norm: input " + ShapeString(x.shape()) + " has not " +
                             std::to_string(c_.channels) + " channels");
    }
    for (const Tensor* p : params) {
      if (p->shape() != Shape{c_.channels}) {
        return InvalidArgument("batch norm: a parameter of " + ShapeString(p->shape()));
      }
    }
    if (x.shape() == shape_) return OkStatus();
    // [N, ..., C] as N x (the rest) x 1 x C: the statistics are per channel.
    const int64_t n = x.dim(0);
    PS_RETURN_IF_ERROR(SetNhwc(&desc_, n, x.size() / (n * c_.channels), 1, c_.channels));
    PS_ASSIGN_OR_RETURN(cudnnTensorDescriptor_t param, param_desc_.Get());
    PS_CUDNN(cudnnDeriveBNTensorDescriptor(param, desc_.get(), kMode));
    shape_ = x.shape();
    return OkStatus();
  }

  CudaDevice* const d_;
  const BatchNormConfig c_;
  Shape shape_;
  TensorDescriptor desc_, param_desc_;
  Tensor x_, mean_, inv_std_, grad_;
  int64_t per_channel_ = 0;  // elements per channel of the training forward
};

}  // namespace

std::unique_ptr<BatchNormKernel> MakeBatchNorm(CudaDevice* device, const BatchNormConfig& config) {
  return std::make_unique<CudaBatchNorm>(device, config);
}

}  // namespace cuda
}  // namespace nn
}  // namespace pstrain
