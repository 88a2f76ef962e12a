// Per-element optimizer updates, TensorFlow's published rules (training_ops).
// Written once for host and device (PSTRAIN_HD): the ps applies them on the
// CPU, and the same functions compile into CUDA kernels.
#ifndef PSTRAIN_PS_UPDATE_RULES_H_
#define PSTRAIN_PS_UPDATE_RULES_H_

#include "core/device_fn.h"

namespace pstrain {

// ApplyGradientDescent: var -= lr * grad.
PSTRAIN_HD void GradientDescentUpdate(float* var, float grad, float lr) { *var -= lr * grad; }

// ApplyMomentum: accum = momentum * accum + grad; then
//   plain:    var -= lr * accum
//   Nesterov: var -= lr * grad + lr * momentum * accum
PSTRAIN_HD void MomentumUpdate(float* var, float* accum, float grad, float lr, float momentum,
                               bool nesterov) {
  *accum = *accum * momentum + grad;
  if (nesterov) {
    *var -= grad * lr + *accum * momentum * lr;
  } else {
    *var -= *accum * lr;
  }
}

}  // namespace pstrain

#endif  // PSTRAIN_PS_UPDATE_RULES_H_
