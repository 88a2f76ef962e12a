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

// Batch normalization, per element of a channel c with the statistics
// mean[c] and inv_std[c] = 1 / sqrt(var[c] + epsilon):
// x_hat = (x - mean) * inv_std, y = gamma * x_hat + beta.
PSTRAIN_HD inline float BatchNormNormalize(float x, float mean, float inv_std) {
  return (x - mean) * inv_std;
}
PSTRAIN_HD inline float BatchNormScale(float x_hat, float gamma, float beta) {
  return gamma * x_hat + beta;
}

// d(loss)/dx of training-mode batch normalization over m elements per
// channel, whose mean and variance depend on x: with scale = gamma * inv_std,
// dbeta_mean = sum(dy) / m and dgamma_mean = sum(dy * x_hat) / m,
// dx = scale * (dy - dbeta_mean - x_hat * dgamma_mean).
PSTRAIN_HD inline float BatchNormGrad(float dy, float x_hat, float scale, float dbeta_mean,
                                      float dgamma_mean) {
  return scale * (dy - dbeta_mean - x_hat * dgamma_mean);
}

// The assign_sub delta of a moving statistic (TensorFlow's
// assign_moving_average): moving -= (1 - decay) * (moving - batch).
PSTRAIN_HD inline float MovingAverageDelta(float moving, float batch, float decay) {
  return (1.0f - decay) * (moving - batch);
}

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
