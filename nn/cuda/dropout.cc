// tf.nn.dropout in training, on the backend's own kernel: the same
// counter-based masks as the CPU backend's (nn/elementwise.h), so a run
// draws the same masks on either.
#include <string>

#include "nn/cuda/cuda_kernels.h"
#include "nn/cuda/elementwise_kernels.h"

namespace pstrain {
namespace nn {
namespace cuda {
namespace {

class CudaDropout : public DropoutKernel {
 public:
  CudaDropout(CudaDevice* device, float keep_prob, uint64_t seed)
      : d_(device), keep_prob_(keep_prob), seed_(seed) {}

  Status Forward(const Tensor& x, Tensor* y) override {
    PS_RETURN_IF_ERROR(CheckOnDevice(d_, "dropout forward", {&x}));
    PS_RETURN_IF_ERROR(d_->Ensure(&mask_, x.shape()));
    PS_RETURN_IF_ERROR(d_->Ensure(y, x.shape()));
    return DropoutForward(x.data(), mask_.data(), y->data(), x.size(), seed_, calls_++, keep_prob_,
                          d_->stream());
  }

  Status Backward(const Tensor& dy, Tensor* dx) override {
    if (dy.shape() != mask_.shape()) {
      return FailedPrecondition("dropout: no forward of shape " + ShapeString(dy.shape()));
    }
    PS_RETURN_IF_ERROR(CheckOnDevice(d_, "dropout backward", {&dy}));
    PS_RETURN_IF_ERROR(d_->Ensure(dx, dy.shape()));
    return Multiply(dy.data(), mask_.data(), dx->data(), dy.size(), d_->stream());
  }

 private:
  CudaDevice* const d_;
  const float keep_prob_;
  const uint64_t seed_;
  uint64_t calls_ = 0;
  Tensor mask_;
};

}  // namespace

StatusOr<std::unique_ptr<DropoutKernel>> MakeDropout(CudaDevice* device, float keep_prob,
                                                     uint64_t seed) {
  if (!(keep_prob > 0.0f && keep_prob <= 1.0f)) {
    return InvalidArgument("dropout: keep_prob must be in (0, 1], got " +
                           std::to_string(keep_prob));
  }
  return std::unique_ptr<DropoutKernel>(std::make_unique<CudaDropout>(device, keep_prob, seed));
}

}  // namespace cuda
}  // namespace nn
}  // namespace pstrain
