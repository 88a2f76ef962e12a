// AvgPool: TensorFlow's avg_pool, forward and backward, written by hand.
//
// Input and output NHWC. Each output is the mean of the input cells its
// window covers; with SAME padding, padded cells are not counted (TF divides
// by the number of real cells, not by the window's size).
//
// Thread safety: immutable; calls may run concurrently.
#ifndef PSTRAIN_NN_CPU_AVG_POOL_H_
#define PSTRAIN_NN_CPU_AVG_POOL_H_

#include <cstdint>

#include "core/status.h"
#include "core/tensor.h"
#include "nn/kernels.h"

namespace pstrain {
namespace nn {
namespace cpu {

class AvgPool : public PoolKernel {
 public:
  explicit AvgPool(const PoolConfig& config) : config_(config) {}
  // [N,Ho,Wo,C] for an input [N,H,W,C].
  Shape OutputShape(const Shape& x) const;
  // y = avg_pool(x); y is resized. InvalidArgument unless x is NHWC.
  Status Forward(const Tensor& x, Tensor* y) override;
  // dx from dy for an input of shape x_shape: each dy spreads evenly over
  // the real cells of its window. dx is resized.
  Status Backward(const Shape& x_shape, const Tensor& dy, Tensor* dx) override;

 private:
  const PoolConfig config_;
};

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_CPU_AVG_POOL_H_
