// Per-element optimizer updates, TensorFlow's published rules (the functors of
// tensorflow/core/kernels/training_ops.cc), one function per optimizer.
// Written once for host and device (PSTRAIN_HD): the ps applies them on the
// CPU, and the same functions compile into CUDA kernels.
#ifndef PSTRAIN_PS_UPDATE_RULES_H_
#define PSTRAIN_PS_UPDATE_RULES_H_

#include <cmath>

#include "core/device_fn.h"

namespace pstrain {

// ApplyGradientDescent: var -= lr * grad.
PSTRAIN_HD inline void GradientDescentUpdate(float* var, float grad, float lr) {
  *var -= lr * grad;
}

// ApplyMomentum: accum = momentum * accum + grad; then
//   plain:    var -= lr * accum
//   Nesterov: var -= lr * grad + lr * momentum * accum
PSTRAIN_HD inline void MomentumUpdate(float* var, float* accum, float grad, float lr,
                                      float momentum, bool nesterov) {
  *accum = *accum * momentum + grad;
  if (nesterov) {
    *var -= grad * lr + *accum * momentum * lr;
  } else {
    *var -= *accum * lr;
  }
}

// ApplyAdagrad: accum += grad^2; var -= lr * grad / sqrt(accum).
PSTRAIN_HD inline void AdagradUpdate(float* var, float* accum, float grad, float lr) {
  *accum += grad * grad;
  *var -= grad * lr / std::sqrt(*accum);
}

// ApplyAdadelta:
//   accum = rho * accum + (1 - rho) * grad^2
//   update = sqrt(accum_update + epsilon) / sqrt(accum + epsilon) * grad
//   var -= lr * update
//   accum_update = rho * accum_update + (1 - rho) * update^2
PSTRAIN_HD inline void AdadeltaUpdate(float* var, float* accum, float* accum_update, float grad,
                                      float lr, float rho, float epsilon) {
  *accum = *accum * rho + grad * grad * (1 - rho);
  const float update = std::sqrt(*accum_update + epsilon) / std::sqrt(*accum + epsilon) * grad;
  *var -= update * lr;
  *accum_update = *accum_update * rho + update * update * (1 - rho);
}

// ApplyAdam's step size from the bias-correction powers beta^t of the t-th
// update: lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t).
PSTRAIN_HD inline float AdamStepSize(float lr, float beta1_power, float beta2_power) {
  return lr * std::sqrt(1 - beta2_power) / (1 - beta1_power);
}

// ApplyAdam, given lr_t from AdamStepSize:
//   m += (1 - beta1) * (grad - m)
//   v += (1 - beta2) * (grad^2 - v)
//   var -= lr_t * m / (sqrt(v) + epsilon)
PSTRAIN_HD inline void AdamUpdate(float* var, float* m, float* v, float grad, float lr_t,
                                  float beta1, float beta2, float epsilon) {
  *m += (grad - *m) * (1 - beta1);
  *v += (grad * grad - *v) * (1 - beta2);
  *var -= *m * lr_t / (std::sqrt(*v) + epsilon);
}

// ApplyRMSProp:
//   ms = ms + (1 - decay) * (grad^2 - ms)
//   mom = momentum * mom + lr * grad / sqrt(ms + epsilon)
//   var -= mom
PSTRAIN_HD inline void RMSPropUpdate(float* var, float* ms, float* mom, float grad, float lr,
                                     float decay, float momentum, float epsilon) {
  *ms += (grad * grad - *ms) * (1 - decay);
  *mom = *mom * momentum + lr * grad / std::sqrt(*ms + epsilon);
  *var -= *mom;
}

// ApplyCenteredRMSProp: RMSProp over the variance estimate ms - mg^2:
//   mg = mg + (1 - decay) * (grad - mg)
//   ms = ms + (1 - decay) * (grad^2 - ms)
//   mom = momentum * mom + lr * grad / sqrt(ms - mg^2 + epsilon)
//   var -= mom
PSTRAIN_HD inline void CenteredRMSPropUpdate(float* var, float* ms, float* mom, float* mg,
                                             float grad, float lr, float decay, float momentum,
                                             float epsilon) {
  *mg += (grad - *mg) * (1 - decay);
  *ms += (grad * grad - *ms) * (1 - decay);
  *mom = *mom * momentum + lr * grad / std::sqrt(*ms - *mg * *mg + epsilon);
  *var -= *mom;
}

// ApplyFtrlV2 (ApplyFtrl when l2_shrinkage is 0), with p = -lr_power:
//   new_accum = accum + grad^2
//   linear += grad + 2 * l2_shrinkage * var
//             - (new_accum^p - accum^p) / lr * var
//   quadratic = new_accum^p / lr + 2 * l2
//   var = |linear| > l1 ? (sign(linear) * l1 - linear) / quadratic : 0
//   accum = new_accum
// TF takes sqrt for lr_power -0.5; so does this.
PSTRAIN_HD inline void FtrlUpdate(float* var, float* accum, float* linear, float grad, float lr,
                                  float l1, float l2, float l2_shrinkage, float lr_power) {
  const float new_accum = *accum + grad * grad;
  const float new_pow = lr_power == -0.5f ? std::sqrt(new_accum) : std::pow(new_accum, -lr_power);
  const float old_pow = lr_power == -0.5f ? std::sqrt(*accum) : std::pow(*accum, -lr_power);
  *linear += grad + 2 * l2_shrinkage * *var - (new_pow - old_pow) / lr * *var;
  const float quadratic = new_pow / lr + 2 * l2;
  if (std::fabs(*linear) > l1) {
    const float sign_l1 = *linear > 0 ? l1 : -l1;
    *var = (sign_l1 - *linear) / quadratic;
  } else {
    *var = 0;
  }
  *accum = new_accum;
}

// ExponentialMovingAverage: shadow -= (1 - decay) * (shadow - value).
PSTRAIN_HD inline void EmaUpdate(float* shadow, float value, float decay) {
  *shadow -= (1.0f - decay) * (*shadow - value);
}

// TF's decay with num_updates: min(decay, (1 + n) / (10 + n)).
PSTRAIN_HD inline float EmaDecay(float decay, long long num_updates) {
  const float warm =
      (1.0f + static_cast<float>(num_updates)) / (10.0f + static_cast<float>(num_updates));
  return decay < warm ? decay : warm;
}

}  // namespace pstrain

#endif  // PSTRAIN_PS_UPDATE_RULES_H_
