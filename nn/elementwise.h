// Element-wise math shared by the CPU layers and a future CUDA backend
// (PSTRAIN_HD compiles each function for both).
#ifndef PSTRAIN_NN_ELEMENTWISE_H_
#define PSTRAIN_NN_ELEMENTWISE_H_

#include <cmath>
#include <cstdint>

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

// Local response normalization (TensorFlow's tf.nn.lrn), per channel c with
// n = bias + alpha * sum of x^2 over the channels [c - r, c + r]:
// y = x * n^-beta. LrnScale gives n^-beta; beta = 0.75 (cifar10's) avoids pow.
PSTRAIN_HD inline float LrnScale(float n, float beta) {
  if (beta == 0.75f) {
    const float r = 1.0f / sqrtf(n);  // n^-0.5
    return r * sqrtf(r);              // n^-0.5 * n^-0.25
  }
  return powf(n, -beta);
}
// d(loss)/dx_j of LRN: the direct term dy_j * scale_j, minus
// 2 * alpha * beta * x_j * window_sum, where window_sum adds
// dy_c * y_c / n_c over the channels c whose window holds j (the same
// window, it being symmetric).
PSTRAIN_HD inline float LrnGrad(float dy, float x, float scale, float alpha, float beta,
                                float window_sum) {
  return dy * scale - 2.0f * alpha * beta * x * window_sum;
}

// Dropout's draw for element i of call `call`: a counter-based hash of
// (seed, call, i), so the mask does not depend on how threads split the work.
// Returns the element's multiplier: 1 / keep_prob when kept, else 0.
PSTRAIN_HD inline float DropoutMultiplier(uint64_t seed, uint64_t call, uint64_t i,
                                          float keep_prob) {
  uint64_t z = seed ^ (call * 0x9e3779b97f4a7c15ULL) ^ (i * 0xd1b54a32d192ed03ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  const float u = static_cast<float>(z >> 40) * 0x1.0p-24f;  // uniform in [0, 1)
  return u < keep_prob ? 1.0f / keep_prob : 0.0f;
}

// One example's softmax cross-entropy over `classes` logits in `row`:
// returns -log softmax(row)[label] and, when grad is set, writes
// (softmax(row) - onehot(label)) * scale into grad. The max is subtracted
// first so that exp cannot overflow; the log-sum-exp is taken in double.
PSTRAIN_HD inline double SoftmaxCrossEntropyRow(const float* row, int64_t classes, int32_t label,
                                                double scale, float* grad) {
  float max = row[0];
  for (int64_t j = 1; j < classes; ++j) max = fmaxf(max, row[j]);
  double sum = 0;
  for (int64_t j = 0; j < classes; ++j) sum += exp(static_cast<double>(row[j] - max));
  const double log_sum = log(sum);
  if (grad != nullptr) {
    for (int64_t j = 0; j < classes; ++j) {
      const double p = exp(static_cast<double>(row[j] - max) - log_sum);
      grad[j] = static_cast<float>((p - (j == label ? 1.0 : 0.0)) * scale);
    }
  }
  return log_sum - (row[label] - max);
}

// Weight decay's gradient term for one element: dw + wd * w.
PSTRAIN_HD inline float WeightDecayGrad(float dw, float w, float wd) { return dw + wd * w; }

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
