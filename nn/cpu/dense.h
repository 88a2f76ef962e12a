// Dense: y = x w + b with TF layouts (x [N,in], w [in,out], b [out]),
// forward and backward, on oneDNN matmul. Primitives are built once per batch
// size and reused.
//
// Thread safety: not thread-safe; one thread at a time.
#ifndef PSTRAIN_NN_CPU_DENSE_H_
#define PSTRAIN_NN_CPU_DENSE_H_

#include <map>
#include <memory>

#include "core/status.h"
#include "core/tensor.h"
#include "nn/cpu/dnnl_context.h"
#include "nn/kernels.h"

namespace pstrain {
namespace nn {
namespace cpu {

class Dense : public AffineKernel {
 public:
  // ctx is borrowed and must outlive the layer.
  Dense(DnnlContext* ctx, int64_t in, int64_t out);
  ~Dense() override;

  // y = x w + b; y is resized to [N,out]. x may have any shape [N,...] with
  // in elements per row (a flatten in x's own, row-major order).
  Status Forward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor* y) override;
  // dx (skipped when null; shaped like x), dw and db from dy, resized.
  Status Backward(const Tensor& x, const Tensor& w, const Tensor& dy, Tensor* dx, Tensor* dw,
                  Tensor* db) override;

 private:
  struct Plan;
  Status CheckShapes(const Tensor& x, const Tensor& w) const;
  Plan* GetPlan(int64_t batch);  // throws dnnl::error

  DnnlContext* const ctx_;
  const int64_t in_;
  const int64_t out_;
  std::map<int64_t, std::unique_ptr<Plan>> plans_;  // by batch size
};

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_CPU_DENSE_H_
