#include "nn/cpu/dropout.h"

#include "nn/elementwise.h"

namespace pstrain {
namespace nn {
namespace cpu {

StatusOr<Dropout> Dropout::Create(float keep_prob, uint64_t seed) {
  if (!(keep_prob > 0.0f && keep_prob <= 1.0f)) {
    return InvalidArgument("dropout: keep_prob must be in (0, 1], got " +
                           std::to_string(keep_prob));
  }
  return Dropout(keep_prob, seed);
}

Status Dropout::Forward(const Tensor& x, Tensor* y) {
  if (mask_.shape() != x.shape()) mask_ = Tensor(x.shape(), Tensor::kUninitialized);
  if (y->shape() != x.shape()) *y = Tensor(x.shape(), Tensor::kUninitialized);
  const uint64_t call = calls_++;
  float* m = mask_.data();
  const float* xp = x.data();
  float* yp = y->data();
  const int64_t n = x.size();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    m[i] = DropoutMultiplier(seed_, call, static_cast<uint64_t>(i), keep_prob_);
    yp[i] = xp[i] * m[i];
  }
  return OkStatus();
}

Status Dropout::Backward(const Tensor& dy, Tensor* dx) {
  if (dy.shape() != mask_.shape()) {
    return FailedPrecondition("dropout: no forward of shape " + ShapeString(dy.shape()));
  }
  if (dx->shape() != dy.shape()) *dx = Tensor(dy.shape(), Tensor::kUninitialized);
  const float* m = mask_.data();
  const float* d = dy.data();
  float* out = dx->data();
  const int64_t n = dy.size();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) out[i] = d[i] * m[i];
  return OkStatus();
}

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
