// Small helpers for the tensors that nn's layers write.
#ifndef PSTRAIN_NN_CPU_TENSOR_UTIL_H_
#define PSTRAIN_NN_CPU_TENSOR_UTIL_H_

#include "core/tensor.h"

namespace pstrain {
namespace nn {
namespace cpu {

// Gives *t the shape, keeping its buffer (and stale contents) when the element
// count already matches, so per-step outputs are not reallocated.
void EnsureShape(Tensor* t, const Shape& shape);

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_CPU_TENSOR_UTIL_H_
