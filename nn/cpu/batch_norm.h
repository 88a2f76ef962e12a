// BatchNorm: TensorFlow's batch normalization (tf.layers.batch_normalization)
// over the last axis: the channels of NHWC input, the features of [N,F]
// input. Statistics run over every other axis, m elements per channel.
//
// Training normalizes with the batch mean and biased variance,
// y = gamma * (x - mean) / sqrt(var + epsilon) + beta, and keeps the batch
// statistics for the moving averages. As TF's fused kernel (its default for
// NHWC) does, the variance those averages move toward carries Bessel's
// correction m / (m - 1); the normalization itself does not. Inference
// normalizes with the moving mean and variance instead.
//
// The moving statistics are not trained: MovingAverageDeltas gives the
// assign_sub deltas that TF's assign_moving_average would apply.
//
// Thread safety: not thread-safe; one thread at a time (the latest training
// forward's statistics and normalized input are kept for Backward).
#ifndef PSTRAIN_NN_CPU_BATCH_NORM_H_
#define PSTRAIN_NN_CPU_BATCH_NORM_H_

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "nn/kernels.h"

namespace pstrain {
namespace nn {
namespace cpu {

class BatchNorm : public BatchNormKernel {
 public:
  explicit BatchNorm(const BatchNormConfig& config);

  const BatchNormConfig& config() const { return config_; }

  // Normalizes x [..., channels] with its own statistics; y is resized and
  // may be x. gamma and beta: [channels]. InvalidArgument on shape mismatch.
  Status ForwardTraining(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                         Tensor* y) override;
  // Normalizes x with moving_mean and moving_variance ([channels]); keeps
  // nothing. y is resized and may be x. InvalidArgument on shape mismatch.
  Status ForwardInference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                          const Tensor& moving_mean, const Tensor& moving_variance,
                          Tensor* y) override;
  // From dy (shaped like the latest ForwardTraining's x), writes dx, dgamma
  // and dbeta, resizing them; dx may be dy. FailedPrecondition without a
  // training forward of that shape before.
  Status Backward(const Tensor& gamma, const Tensor& dy, Tensor* dx, Tensor* dgamma,
                  Tensor* dbeta) override;
  // The assign_sub deltas that move the moving statistics toward the latest
  // training forward's batch statistics: delta = (1 - momentum) *
  // (moving - batch), so moving - delta is TF's updated value. Resizes the
  // outputs. FailedPrecondition without a training forward before.
  Status MovingAverageDeltas(const Tensor& moving_mean, const Tensor& moving_variance,
                             Tensor* mean_delta, Tensor* variance_delta) override;

 private:
  Status CheckParams(const Tensor& x, const std::vector<const Tensor*>& params) const;

  const BatchNormConfig config_;
  // Of the latest ForwardTraining: x_hat = (x - mean) * inv_std, the batch
  // mean, the Bessel-corrected batch variance, and 1 / sqrt(var + epsilon).
  Tensor x_hat_;
  std::vector<float> mean_, variance_, inv_std_;
};

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_CPU_BATCH_NORM_H_
