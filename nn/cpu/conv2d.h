// Conv2D: TensorFlow's conv2d plus bias, forward and backward, on oneDNN.
//
// Layouts are TF's: input and output NHWC, weights HWIO [kh,kw,cin,cout],
// bias [cout]. Padding is TF SAME (asymmetric, smaller half before) or VALID.
// oneDNN primitives are built once per input shape and reused.
//
// Thread safety: not thread-safe; one thread at a time.
#ifndef PSTRAIN_NN_CPU_CONV2D_H_
#define PSTRAIN_NN_CPU_CONV2D_H_

#include <map>
#include <memory>

#include "core/status.h"
#include "core/tensor.h"
#include "nn/cpu/dnnl_context.h"
#include "nn/kernels.h"

namespace pstrain {
namespace nn {
namespace cpu {

class Conv2D : public AffineKernel {
 public:
  // ctx is borrowed and must outlive the layer.
  Conv2D(DnnlContext* ctx, const Conv2DConfig& config);
  ~Conv2D() override;

  const Conv2DConfig& config() const { return config_; }
  // [N,Ho,Wo,cout] for an input of shape [N,H,W,cin].
  Shape OutputShape(const Shape& x) const;

  // y = conv(x, w) + b; y is resized. InvalidArgument on shape mismatch.
  Status Forward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor* y) override;
  // Given dy = d(loss)/dy, writes dx (skipped when null, e.g. for the input
  // images), dw and db, resizing them.
  Status Backward(const Tensor& x, const Tensor& w, const Tensor& dy, Tensor* dx, Tensor* dw,
                  Tensor* db) override;

 private:
  struct Plan;
  Plan* GetPlan(const Shape& x);  // throws dnnl::error

  DnnlContext* const ctx_;
  const Conv2DConfig config_;
  std::map<Shape, std::unique_ptr<Plan>> plans_;  // by input shape
};

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_CPU_CONV2D_H_
