// MaxPool: TensorFlow's max_pool, forward and backward, written by hand.
//
// Input and output NHWC. Padding is TF SAME (padded cells never win, as with
// TF's -inf padding) or VALID. Of equal values in a window, the first in row
// order wins. Backward sends each output's gradient to the cell that won it
// in the latest Forward on the same input shape, so call Forward first.
//
// Thread safety: not thread-safe; one thread at a time.
#ifndef PSTRAIN_NN_CPU_MAX_POOL_H_
#define PSTRAIN_NN_CPU_MAX_POOL_H_

#include <cstdint>
#include <map>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "nn/kernels.h"

namespace pstrain {
namespace nn {
namespace cpu {

class MaxPool : public PoolKernel {
 public:
  explicit MaxPool(const PoolConfig& config) : config_(config) {}

  Shape OutputShape(const Shape& x) const;
  // y = max_pool(x); y is resized.
  Status Forward(const Tensor& x, Tensor* y) override;
  // The same y, keeping no winners (a later Backward does not see it).
  Status Infer(const Tensor& x, Tensor* y) override;
  // dx = d(loss)/dx given dy, for the x of the latest Forward of this shape.
  // FailedPrecondition if no Forward ran on this shape.
  Status Backward(const Shape& x_shape, const Tensor& dy, Tensor* dx) override;

 private:
  Status CheckInput(const Shape& x) const;
  // y's values and, unless null, each one's winner.
  void Pool(const Tensor& x, Tensor* y, int32_t* won) const;

  const PoolConfig config_;
  // By input shape: for each output of the latest Forward, the cell of its
  // window (row * window + column) that won.
  std::map<Shape, std::vector<int32_t>> winners_;
};

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_CPU_MAX_POOL_H_
