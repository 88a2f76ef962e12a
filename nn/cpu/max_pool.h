// MaxPool: TensorFlow's max_pool, forward and backward, on oneDNN.
//
// Input and output NHWC. Padding is TF SAME (padded cells never win, as with
// TF's -inf padding) or VALID. Backward uses the argmax workspace that the
// latest Forward on the same input shape recorded, so call Forward first.
// Primitives are built once per input shape and reused.
//
// Thread safety: not thread-safe; one thread at a time.
#ifndef PSTRAIN_NN_CPU_MAX_POOL_H_
#define PSTRAIN_NN_CPU_MAX_POOL_H_

#include <map>
#include <memory>

#include "core/status.h"
#include "core/tensor.h"
#include "nn/cpu/dnnl_context.h"
#include "nn/kernels.h"

namespace pstrain {
namespace nn {
namespace cpu {

class MaxPool : public PoolKernel {
 public:
  // ctx is borrowed and must outlive the layer.
  MaxPool(DnnlContext* ctx, const PoolConfig& config);
  ~MaxPool() override;

  Shape OutputShape(const Shape& x) const;
  // y = max_pool(x); y is resized.
  Status Forward(const Tensor& x, Tensor* y) override;
  // dx = d(loss)/dx given dy, for the x of the latest Forward of this shape.
  // FailedPrecondition if no Forward ran on this shape.
  Status Backward(const Shape& x_shape, const Tensor& dy, Tensor* dx) override;

 private:
  struct Plan;
  Status CheckInput(const Shape& x) const;
  Plan* GetPlan(const Shape& x);  // throws dnnl::error

  DnnlContext* const ctx_;
  const PoolConfig config_;
  std::map<Shape, std::unique_ptr<Plan>> plans_;  // by input shape
};

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_CPU_MAX_POOL_H_
