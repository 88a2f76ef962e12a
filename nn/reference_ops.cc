#include "nn/reference_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace pstrain {
namespace nn {
namespace {

// TF: SAME gives ceil(in / stride) outputs and pads (out-1)*stride + k - in
// cells in total, floor half before; VALID gives ceil((in - k + 1) / stride).
void Window(int64_t in, int64_t k, int64_t stride, bool same, int64_t* out, int64_t* before) {
  if (same) {
    *out = (in + stride - 1) / stride;
    *before = std::max<int64_t>(0, (*out - 1) * stride + k - in) / 2;
  } else {
    *out = (in - k + stride) / stride;
    *before = 0;
  }
}

}  // namespace

Tensor ReferenceConv2D(const Tensor& x, const Tensor& w, const Tensor& b, int stride, bool same) {
  const int64_t n = x.dim(0), h = x.dim(1), wd = x.dim(2), cin = x.dim(3);
  const int64_t kh = w.dim(0), kw = w.dim(1), cout = w.dim(3);
  int64_t ho, wo, ph, pw;
  Window(h, kh, stride, same, &ho, &ph);
  Window(wd, kw, stride, same, &wo, &pw);
  Tensor y({n, ho, wo, cout});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t oy = 0; oy < ho; ++oy)
      for (int64_t ox = 0; ox < wo; ++ox)
        for (int64_t co = 0; co < cout; ++co) {
          double sum = b[co];
          for (int64_t ky = 0; ky < kh; ++ky)
            for (int64_t kx = 0; kx < kw; ++kx) {
              int64_t iy = oy * stride + ky - ph, ix = ox * stride + kx - pw;
              if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
              for (int64_t ci = 0; ci < cin; ++ci) {
                sum += static_cast<double>(x[((i * h + iy) * wd + ix) * cin + ci]) *
                       w[((ky * kw + kx) * cin + ci) * cout + co];
              }
            }
          y[((i * ho + oy) * wo + ox) * cout + co] = static_cast<float>(sum);
        }
  return y;
}

Tensor ReferenceMaxPool(const Tensor& x, int window, int stride, bool same) {
  const int64_t n = x.dim(0), h = x.dim(1), wd = x.dim(2), c = x.dim(3);
  int64_t ho, wo, ph, pw;
  Window(h, window, stride, same, &ho, &ph);
  Window(wd, window, stride, same, &wo, &pw);
  Tensor y({n, ho, wo, c});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t oy = 0; oy < ho; ++oy)
      for (int64_t ox = 0; ox < wo; ++ox)
        for (int64_t ch = 0; ch < c; ++ch) {
          float best = -std::numeric_limits<float>::infinity();
          for (int64_t ky = 0; ky < window; ++ky)
            for (int64_t kx = 0; kx < window; ++kx) {
              int64_t iy = oy * stride + ky - ph, ix = ox * stride + kx - pw;
              if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
              best = std::max(best, x[((i * h + iy) * wd + ix) * c + ch]);
            }
          y[((i * ho + oy) * wo + ox) * c + ch] = best;
        }
  return y;
}

Tensor ReferenceDense(const Tensor& x, const Tensor& w, const Tensor& b) {
  const int64_t n = x.dim(0), in = w.dim(0), out = w.dim(1);
  Tensor y({n, out});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t o = 0; o < out; ++o) {
      double sum = b[o];
      for (int64_t k = 0; k < in; ++k) sum += static_cast<double>(x[i * in + k]) * w[k * out + o];
      y[i * out + o] = static_cast<float>(sum);
    }
  return y;
}

Tensor ReferenceRelu(const Tensor& x) {
  Tensor y(x.shape());
  for (int64_t i = 0; i < x.size(); ++i) y[i] = x[i] > 0 ? x[i] : 0.0f;
  return y;
}

double ReferenceCrossEntropy(const Tensor& logits, const std::vector<int32_t>& labels) {
  const int64_t n = logits.dim(0), c = logits.dim(1);
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    double sum = 0;
    for (int64_t j = 0; j < c; ++j) sum += std::exp(static_cast<double>(logits[i * c + j]));
    total += std::log(sum) - logits[i * c + labels[i]];
  }
  return total / n;
}

}  // namespace nn
}  // namespace pstrain
