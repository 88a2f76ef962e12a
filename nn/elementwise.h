// Element-wise math shared by the CPU layers and a future CUDA backend
// (PSTRAIN_HD compiles each function for both).
#ifndef PSTRAIN_NN_ELEMENTWISE_H_
#define PSTRAIN_NN_ELEMENTWISE_H_

#include "core/device_fn.h"

namespace pstrain {
namespace nn {

PSTRAIN_HD inline float Relu(float x) { return x > 0.0f ? x : 0.0f; }

// d(loss)/dx of y = relu(x), from y: y > 0 exactly where x > 0. The gradient
// at x == 0 is 0, as in TensorFlow.
PSTRAIN_HD inline float ReluGrad(float dy, float y) { return y > 0.0f ? dy : 0.0f; }

// One Nesterov momentum step, TensorFlow's use_nesterov form:
// accum = m * accum + g; var -= lr * g + lr * m * accum.
PSTRAIN_HD inline void NesterovMomentum(float lr, float momentum, float g, float* var,
                                        float* accum) {
  *accum = momentum * *accum + g;
  *var -= lr * g + lr * momentum * *accum;
}

}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_ELEMENTWISE_H_
