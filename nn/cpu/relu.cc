#include "nn/cpu/relu.h"

#include <cassert>

#include "nn/cpu/tensor_util.h"
#include "nn/elementwise.h"

namespace pstrain {
namespace nn {
namespace cpu {

void ReluForward(const Tensor& x, Tensor* y) {
  if (y != &x) EnsureShape(y, x.shape());
  const float* in = x.data();
  float* out = y->data();
  const int64_t n = x.size();
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) out[i] = Relu(in[i]);
}

void ReluBackward(const Tensor& y, const Tensor& dy, Tensor* dx) {
  assert(y.size() == dy.size());
  if (dx != &dy) EnsureShape(dx, dy.shape());
  const float* act = y.data();
  const float* g = dy.data();
  float* out = dx->data();
  const int64_t n = dy.size();
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) out[i] = ReluGrad(g[i], act[i]);
}

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
