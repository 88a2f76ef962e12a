// Lrn: TensorFlow's local response normalization (tf.nn.lrn), forward and
// backward, each one fused pass over the channels of every pixel.
//
// Input and output NHWC; the window runs over channels:
//   n[c] = bias + alpha * sum(x[c - r .. c + r]^2)   (channels outside [0, C) absent)
//   y[c] = x[c] * n[c]^-beta
// (TF's definition: the sum is not divided by the window's size, unlike
// PyTorch's LocalResponseNorm.) Channels are contiguous in NHWC, so each
// pixel's window sums are 2r + 1 shifted adds of one row of memory, in vector
// registers across the channels. Nothing is kept between Forward and
// Backward: Backward recomputes n from x, which costs less than storing it.
//
// Thread safety: the object is immutable; calls may run concurrently.
#ifndef PSTRAIN_NN_CPU_LRN_H_
#define PSTRAIN_NN_CPU_LRN_H_

#include <cstdint>

#include "core/status.h"
#include "core/tensor.h"
#include "nn/kernels.h"

namespace pstrain {
namespace nn {
namespace cpu {

class Lrn : public LrnKernel {
 public:
  // InvalidArgument for depth_radius < 0, bias <= 0, alpha < 0 or beta < 0.
  static StatusOr<Lrn> Create(const LrnConfig& config);

  const LrnConfig& config() const { return config_; }
  // y = lrn(x) for x of rank 4 (NHWC); y is resized.
  Status Forward(const Tensor& x, Tensor* y) override;
  // dx = d(loss)/dx given x and dy = d(loss)/dy; dx is resized.
  Status Backward(const Tensor& x, const Tensor& dy, Tensor* dx) override;

 private:
  explicit Lrn(const LrnConfig& config) : config_(config) {}
  const LrnConfig config_;
};

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_CPU_LRN_H_
