#include "nn/cpu/lrn.h"

#include <algorithm>
#include <vector>

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

// out[c] = sum of in[c - r .. c + r] (within [0, C)), by a sliding window.
// The running sum is a double, so what leaves the window leaves no rounding
// error behind for the small values that follow.
void WindowSums(const float* in, int64_t channels, int64_t r, float* out) {
  double sum = 0.0;
  for (int64_t c = 0; c < std::min(r, channels); ++c) sum += in[c];
  for (int64_t c = 0; c < channels; ++c) {
    if (c + r < channels) sum += in[c + r];
    out[c] = static_cast<float>(sum);
    if (c - r >= 0) sum -= in[c - r];
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
#pragma omp parallel
  {
    std::vector<float> sq(channels), sums(channels);
#pragma omp for schedule(static)
    for (int64_t p = 0; p < pixels; ++p) {
      const float* xp = in + p * channels;
      float* yp = out + p * channels;
      for (int64_t k = 0; k < channels; ++k) sq[k] = xp[k] * xp[k];
      WindowSums(sq.data(), channels, c.depth_radius, sums.data());
      for (int64_t k = 0; k < channels; ++k) {
        yp[k] = xp[k] * LrnScale(c.bias + c.alpha * sums[k], c.beta);
      }
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
#pragma omp parallel
  {
    std::vector<float> buf(channels), sums(channels), scale(channels);
#pragma omp for schedule(static)
    for (int64_t p = 0; p < pixels; ++p) {
      const float* xp = x.data() + p * channels;
      const float* dyp = dy.data() + p * channels;
      float* dxp = dx->data() + p * channels;
      for (int64_t k = 0; k < channels; ++k) buf[k] = xp[k] * xp[k];
      WindowSums(buf.data(), channels, c.depth_radius, sums.data());
      for (int64_t k = 0; k < channels; ++k) {
        const float n = c.bias + c.alpha * sums[k];
        scale[k] = LrnScale(n, c.beta);
        buf[k] = dyp[k] * xp[k] * scale[k] / n;  // dy * y / n
      }
      WindowSums(buf.data(), channels, c.depth_radius, sums.data());
      for (int64_t k = 0; k < channels; ++k) {
        dxp[k] = LrnGrad(dyp[k], xp[k], scale[k], c.alpha, c.beta, sums[k]);
      }
    }
  }
  return OkStatus();
}

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
