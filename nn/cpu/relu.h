// ReLU over whole tensors, forward and backward, written by hand (a memory-
// bound loop; threads split it with OpenMP).
#ifndef PSTRAIN_NN_CPU_RELU_H_
#define PSTRAIN_NN_CPU_RELU_H_

#include "core/tensor.h"

namespace pstrain {
namespace nn {
namespace cpu {

// y = max(x, 0); y is resized. y may be x (in place).
void ReluForward(const Tensor& x, Tensor* y);
// dx = dy where y > 0, else 0, from the forward's output y (same shape as
// dy); dx is resized and may be dy (in place).
void ReluBackward(const Tensor& y, const Tensor& dy, Tensor* dx);

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_CPU_RELU_H_
