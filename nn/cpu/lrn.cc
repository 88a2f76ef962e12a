#include "nn/cpu/lrn.h"

#include <algorithm>
#include <vector>

#include "nn/cpu/clones.h"
#include "nn/elementwise.h"

namespace pstrain {
namespace nn {
namespace cpu {
namespace {

Status CheckNhwc(const char* what, const Tensor& t) {
  if (t.rank() != 4) {
    return InvalidArgument(std::string("lrn: ") + what + " must be NHWC, got " +
                           ShapeString(t.shape()));
  }
  return OkStatus();
}

// out[k] = sum of in[k - r .. k + r] for k in [0, C), where `in` points r
// floats into a buffer holding zeros in the r floats on either side. A direct
// sum of the 2r + 1 terms vectorizes across k (a sliding window would chain
// every channel's sum on the one before) and leaves no rounding error from
// terms leaving a window.
PSTRAIN_CLONES void WindowSums(const float* in, int64_t channels, int64_t r, float* out) {
#pragma omp simd
  for (int64_t k = 0; k < channels; ++k) out[k] = in[k - r];
  for (int64_t j = 1 - r; j <= r; ++j) {
#pragma omp simd
    for (int64_t k = 0; k < channels; ++k) out[k] += in[k + j];
  }
}

// n[k] = bias + alpha * sums[k] in place, and scale[k] = n[k]^-beta. The
// common beta of 0.75 gets a loop of its own, which vectorizes (powf does
// not).
inline void NormsAndScales(const LrnConfig& c, int64_t channels, float* n, float* scale) {
#pragma omp simd
  for (int64_t k = 0; k < channels; ++k) n[k] = c.bias + c.alpha * n[k];
  if (c.beta == 0.75f) {
#pragma omp simd
    for (int64_t k = 0; k < channels; ++k) scale[k] = LrnScale(n[k], 0.75f);
  } else {
    for (int64_t k = 0; k < channels; ++k) scale[k] = LrnScale(n[k], c.beta);
  }
}

// One pixel's forward: y = x * (bias + alpha * window sum of x^2)^-beta.
// `sq` has r zeros before and after its C floats.
PSTRAIN_CLONES void ForwardPixel(const LrnConfig& c, const float* x, int64_t channels, float* sq,
                                 float* n, float* scale, float* y) {
#pragma omp simd
  for (int64_t k = 0; k < channels; ++k) sq[k] = x[k] * x[k];
  WindowSums(sq, channels, c.depth_radius, n);
  NormsAndScales(c, channels, n, scale);
#pragma omp simd
  for (int64_t k = 0; k < channels; ++k) y[k] = x[k] * scale[k];
}

// One pixel's backward (LrnGrad), n recomputed from x. `buf` has r zeros
// before and after its C floats.
PSTRAIN_CLONES void BackwardPixel(const LrnConfig& c, const float* x, const float* dy,
                                  int64_t channels, float* buf, float* sums, float* scale,
                                  float* dx) {
#pragma omp simd
  for (int64_t k = 0; k < channels; ++k) buf[k] = x[k] * x[k];
  WindowSums(buf, channels, c.depth_radius, sums);
  NormsAndScales(c, channels, sums, scale);
#pragma omp simd
  for (int64_t k = 0; k < channels; ++k) buf[k] = dy[k] * x[k] * scale[k] / sums[k];  // dy y / n
  WindowSums(buf, channels, c.depth_radius, sums);
#pragma omp simd
  for (int64_t k = 0; k < channels; ++k) {
    dx[k] = LrnGrad(dy[k], x[k], scale[k], c.alpha, c.beta, sums[k]);
  }
}

}  // namespace

StatusOr<Lrn> Lrn::Create(const LrnConfig& config) {
  if (config.depth_radius < 0 || !(config.bias > 0) || !(config.alpha >= 0) ||
      !(config.beta >= 0)) {
    return InvalidArgument("lrn: depth_radius and alpha and beta must be >= 0, bias > 0");
  }
  return Lrn(config);
}

Status Lrn::Forward(const Tensor& x, Tensor* y) {
  PS_RETURN_IF_ERROR(CheckNhwc("x", x));
  if (y->shape() != x.shape()) *y = Tensor(x.shape(), Tensor::kUninitialized);
  const int64_t channels = x.dim(3);
  const int64_t pixels = channels == 0 ? 0 : x.size() / channels;
  const float* in = x.data();
  float* out = y->data();
  const LrnConfig c = config_;
  const int64_t r = c.depth_radius;
#pragma omp parallel
  {
    std::vector<float> sq(channels + 2 * r, 0.0f), n(channels), scale(channels);
#pragma omp for schedule(static)
    for (int64_t p = 0; p < pixels; ++p) {
      ForwardPixel(c, in + p * channels, channels, sq.data() + r, n.data(), scale.data(),
                   out + p * channels);
    }
  }
  return OkStatus();
}

Status Lrn::Backward(const Tensor& x, const Tensor& dy, Tensor* dx) {
  PS_RETURN_IF_ERROR(CheckNhwc("x", x));
  if (dy.shape() != x.shape()) {
    return InvalidArgument("lrn: dy has shape " + ShapeString(dy.shape()) + ", x has " +
                           ShapeString(x.shape()));
  }
  if (dx->shape() != x.shape()) *dx = Tensor(x.shape(), Tensor::kUninitialized);
  const int64_t channels = x.dim(3);
  const int64_t pixels = channels == 0 ? 0 : x.size() / channels;
  const LrnConfig c = config_;
  const int64_t r = c.depth_radius;
#pragma omp parallel
  {
    std::vector<float> buf(channels + 2 * r, 0.0f), sums(channels), scale(channels);
#pragma omp for schedule(static)
    for (int64_t p = 0; p < pixels; ++p) {
      BackwardPixel(c, x.data() + p * channels, dy.data() + p * channels, channels, buf.data() + r,
                    sums.data(), scale.data(), dx->data() + p * channels);
    }
  }
  return OkStatus();
}

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
