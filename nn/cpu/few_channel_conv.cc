#include "nn/cpu/few_channel_conv.h"

#include <omp.h>

#include <algorithm>
#include <cstring>

#include "nn/conv2d_shapes.h"
#include "nn/cpu/clones.h"
#include "nn/cpu/tensor_util.h"
#include "nn/padding.h"

namespace pstrain {
namespace nn {
namespace cpu {
namespace {

constexpr int64_t kMaxInChannels = 4;
constexpr int64_t kLanes = 16;  // output channels per vector
constexpr int kPixels = 6;      // output pixels a forward pass keeps in registers
constexpr int kTaps = 6;        // taps the weight gradient keeps in registers

// 16 floats: one AVX-512 register, two AVX2 ones. Every function that takes
// or returns one is inlined into the PSTRAIN_CLONES functions below, so no
// call passes it across the baseline ABI that -Wpsabi warns about. No clone
// uses one directly: clang refuses a V16 passed from a clone to a function
// built for the baseline, even one always inlined.
typedef float V16 __attribute__((vector_size(64)));
#pragma GCC diagnostic ignored "-Wpsabi"

__attribute__((always_inline)) inline V16 Load(const float* p) {
  V16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
__attribute__((always_inline)) inline void Store(float* p, V16 v) { std::memcpy(p, &v, sizeof v); }
__attribute__((always_inline)) inline void AddTo(float* p, V16 v) { Store(p, Load(p) + v); }

struct Geometry {
  int64_t kh, kw, cin, cout, stride;
  int64_t h, w;                // the input image
  WindowDim rows, cols;        // output size and padding
  int64_t padded_h, padded_w;  // the padded image: every cell a window reads

  int64_t image() const { return h * w * cin; }
  int64_t padded() const { return padded_h * padded_w * cin; }
  int64_t outputs() const { return rows.out * cols.out * cout; }
};

Geometry GeometryOf(const Conv2DConfig& c, const Shape& x) {
  Geometry g;
  g.kh = c.kernel_h;
  g.kw = c.kernel_w;
  g.cin = c.in_channels;
  g.cout = c.out_channels;
  g.stride = c.stride;
  g.h = x[1];
  g.w = x[2];
  g.rows = ComputeWindow(g.h, g.kh, g.stride, c.padding);
  g.cols = ComputeWindow(g.w, g.kw, g.stride, c.padding);
  g.padded_h = (g.rows.out - 1) * g.stride + g.kh;
  g.padded_w = (g.cols.out - 1) * g.stride + g.kw;
  return g;
}

// padded[r][q] = x[r - pad_top][q - pad_left], 0 in the padding. (VALID
// windows may leave the last rows and columns unread: those are dropped.)
void PadImage(const float* x, const Geometry& g, float* padded) {
  std::fill(padded, padded + g.padded(), 0.0f);
  const int64_t n = std::min(g.w, g.padded_w - g.cols.pad_before) * g.cin;
  for (int64_t r = 0; r < g.h && r + g.rows.pad_before < g.padded_h; ++r) {
    std::copy(x + r * g.w * g.cin, x + r * g.w * g.cin + n,
              padded + ((r + g.rows.pad_before) * g.padded_w + g.cols.pad_before) * g.cin);
  }
}

// The inverse: x's cells from the padded image, 0 where no window reads.
void CropImage(const float* padded, const Geometry& g, float* x) {
  std::fill(x, x + g.image(), 0.0f);
  const int64_t n = std::min(g.w, g.padded_w - g.cols.pad_before) * g.cin;
  for (int64_t r = 0; r < g.h && r + g.rows.pad_before < g.padded_h; ++r) {
    const float* src = padded + ((r + g.rows.pad_before) * g.padded_w + g.cols.pad_before) * g.cin;
    std::copy(src, src + n, x + r * g.w * g.cin);
  }
}

// Whether a V16 is one register (AVX-512's 32) rather than two (AVX2's 16):
// then the loops below keep two blocks of 16 output channels in flight, so
// that at least 10 independent sums hide the FMA's latency.
bool WideRegisters() {
  static const bool wide = __builtin_cpu_supports("avx512f");
  return wide;
}

// Output pixels [ow, ow + P) of row oh, channels [oc, oc + 16 B).
template <int P, int B>
__attribute__((always_inline)) inline void ForwardPixels(const float* padded, const Geometry& g,
                                                         const float* w, const float* b, int64_t oh,
                                                         int64_t ow, int64_t oc, float* y_row) {
  V16 acc[B][P];
  for (int k = 0; k < B; ++k) {
    for (int p = 0; p < P; ++p) acc[k][p] = Load(b + oc + k * kLanes);
  }
  // A kernel row's taps and input channels are adjacent in the weights and
  // in the padded image alike: one loop over kw * cin.
  const int64_t taps = g.kw * g.cin;
  const int64_t step = g.stride * g.cin;
  for (int64_t i = 0; i < g.kh; ++i) {
    const float* row = padded + ((oh * g.stride + i) * g.padded_w + ow * g.stride) * g.cin;
    const float* wi = w + i * taps * g.cout + oc;
    for (int64_t t = 0; t < taps; ++t) {
      V16 wv[B];
      for (int k = 0; k < B; ++k) wv[k] = Load(wi + t * g.cout + k * kLanes);
#pragma GCC unroll 8
      for (int p = 0; p < P; ++p) {
        for (int k = 0; k < B; ++k) acc[k][p] += row[t + p * step] * wv[k];
      }
    }
  }
  for (int k = 0; k < B; ++k) {
    for (int p = 0; p < P; ++p) Store(y_row + (ow + p) * g.cout + oc + k * kLanes, acc[k][p]);
  }
}

template <int B>
__attribute__((always_inline)) inline void ForwardRow(const float* padded, const Geometry& g,
                                                      const float* w, const float* b, int64_t oh,
                                                      int64_t oc, float* y_row) {
  int64_t ow = 0;
  for (; ow + kPixels <= g.cols.out; ow += kPixels) {
    ForwardPixels<kPixels, B>(padded, g, w, b, oh, ow, oc, y_row);
  }
  for (; ow + 3 <= g.cols.out; ow += 3) ForwardPixels<3, B>(padded, g, w, b, oh, ow, oc, y_row);
  for (; ow < g.cols.out; ++ow) ForwardPixels<1, B>(padded, g, w, b, oh, ow, oc, y_row);
}

PSTRAIN_CLONES void ForwardImage(const float* padded, const Geometry& g, const float* w,
                                 const float* b, float* y) {
  const bool wide = WideRegisters();
  for (int64_t oh = 0; oh < g.rows.out; ++oh) {
    float* y_row = y + oh * g.cols.out * g.cout;
    int64_t oc = 0;
    for (; wide && oc + 2 * kLanes <= g.cout; oc += 2 * kLanes) {
      ForwardRow<2>(padded, g, w, b, oh, oc, y_row);
    }
    for (; oc < g.cout; oc += kLanes) ForwardRow<1>(padded, g, w, b, oh, oc, y_row);
  }
}

// dw for taps [t0, t0 + T) of kernel row i (a tap: a column and an input
// channel), output channels [oc, oc + 16 B), summed over the image's output
// pixels.
template <int T, int B>
__attribute__((always_inline)) inline void TapGradients(const float* padded, const Geometry& g,
                                                        const float* dy, int64_t i, int64_t t0,
                                                        int64_t oc, float* dw) {
  V16 acc[B][T];
  for (int k = 0; k < B; ++k) {
    for (int t = 0; t < T; ++t) acc[k][t] = V16{};
  }
  const int64_t step = g.stride * g.cin;
  for (int64_t oh = 0; oh < g.rows.out; ++oh) {
    const float* row = padded + (oh * g.stride + i) * g.padded_w * g.cin + t0;
    const float* d = dy + oh * g.cols.out * g.cout + oc;
    for (int64_t ow = 0; ow < g.cols.out; ++ow) {
      V16 dv[B];
      for (int k = 0; k < B; ++k) dv[k] = Load(d + ow * g.cout + k * kLanes);
      const float* xp = row + ow * step;
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) {
        for (int k = 0; k < B; ++k) acc[k][t] += xp[t] * dv[k];
      }
    }
  }
  float* dwi = dw + (i * g.kw * g.cin + t0) * g.cout + oc;
  for (int k = 0; k < B; ++k) {
    for (int t = 0; t < T; ++t) AddTo(dwi + t * g.cout + k * kLanes, acc[k][t]);
  }
}

// TapGradients<n, B> for a count n of taps from 1 to T.
template <int T, int B>
__attribute__((always_inline)) inline void SomeTapGradients(int64_t n, const float* padded,
                                                            const Geometry& g, const float* dy,
                                                            int64_t i, int64_t t0, int64_t oc,
                                                            float* dw) {
  if constexpr (T > 1) {
    if (n < T) return SomeTapGradients<T - 1, B>(n, padded, g, dy, i, t0, oc, dw);
  }
  TapGradients<T, B>(padded, g, dy, i, t0, oc, dw);
}

// dw of kernel row i's taps, kTaps at a time.
template <int B>
__attribute__((always_inline)) inline void RowGradients(const float* padded, const Geometry& g,
                                                        const float* dy, int64_t i, int64_t oc,
                                                        float* dw) {
  const int64_t taps = g.kw * g.cin;
  for (int64_t t0 = 0; t0 < taps; t0 += kTaps) {
    SomeTapGradients<kTaps, B>(std::min<int64_t>(kTaps, taps - t0), padded, g, dy, i, t0, oc, dw);
  }
}

// db += dy summed over the image's pixels.
__attribute__((always_inline)) inline void BiasGradients(const Geometry& g, const float* dy,
                                                         float* db) {
  for (int64_t oc = 0; oc < g.cout; oc += kLanes) {
    V16 sum = V16{};
    for (int64_t o = oc; o < g.outputs(); o += g.cout) sum += Load(dy + o);
    AddTo(db + oc, sum);
  }
}

PSTRAIN_CLONES void WeightGradImage(const float* padded, const Geometry& g, const float* dy,
                                    float* dw, float* db) {
  BiasGradients(g, dy, db);
  const bool wide = WideRegisters();
  for (int64_t i = 0; i < g.kh; ++i) {
    int64_t oc = 0;
    for (; wide && oc + 2 * kLanes <= g.cout; oc += 2 * kLanes) {
      RowGradients<2>(padded, g, dy, i, oc, dw);
    }
    for (; oc < g.cout; oc += kLanes) RowGradients<1>(padded, g, dy, i, oc, dw);
  }
}

// The gradient of the padded image: each output pixel's dy, through every
// tap's weights, summed over the output channels.
PSTRAIN_CLONES void InputGradImage(const float* dy, const Geometry& g, const float* w,
                                   float* padded_grad) {
  std::fill(padded_grad, padded_grad + g.padded(), 0.0f);
  for (int64_t oh = 0; oh < g.rows.out; ++oh) {
    for (int64_t ow = 0; ow < g.cols.out; ++ow) {
      const float* d = dy + (oh * g.cols.out + ow) * g.cout;
      for (int64_t i = 0; i < g.kh; ++i) {
        float* row = padded_grad + ((oh * g.stride + i) * g.padded_w + ow * g.stride) * g.cin;
        for (int64_t j = 0; j < g.kw; ++j) {
          for (int64_t c = 0; c < g.cin; ++c) {
            const float* wp = w + ((i * g.kw + j) * g.cin + c) * g.cout;
            float s = 0.0f;
#pragma omp simd reduction(+ : s)
            for (int64_t o = 0; o < g.cout; ++o) s += d[o] * wp[o];
            row[j * g.cin + c] += s;
          }
        }
      }
    }
  }
}

}  // namespace

bool FewChannelConv2D::Supports(const Conv2DConfig& c) {
  return c.in_channels >= 1 && c.in_channels <= kMaxInChannels && c.out_channels > 0 &&
         c.out_channels % kLanes == 0 && c.kernel_h >= 1 && c.kernel_w >= 1 && c.stride >= 1;
}

Status FewChannelConv2D::Forward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor* y) {
  PS_RETURN_IF_ERROR(CheckConv2DOperands(config_, x, w, &b, nullptr));
  const Geometry g = GeometryOf(config_, x.shape());
  EnsureShape(y, Conv2DOutputShape(config_, x.shape()));
  padded_.resize(omp_get_max_threads());
#pragma omp parallel
  {
    std::vector<float>& padded = padded_[omp_get_thread_num()];
    padded.resize(g.padded());
#pragma omp for schedule(static)
    for (int64_t n = 0; n < x.dim(0); ++n) {
      PadImage(x.data() + n * g.image(), g, padded.data());
      ForwardImage(padded.data(), g, w.data(), b.data(), y->data() + n * g.outputs());
    }
  }
  return OkStatus();
}

Status FewChannelConv2D::Backward(const Tensor& x, const Tensor& w, const Tensor& dy, Tensor* dx,
                                  Tensor* dw, Tensor* db) {
  PS_RETURN_IF_ERROR(CheckConv2DOperands(config_, x, w, nullptr, &dy));
  const Geometry g = GeometryOf(config_, x.shape());
  if (dx != nullptr) EnsureShape(dx, x.shape());
  const int threads = omp_get_max_threads();
  padded_.resize(threads);
  padded_grad_.resize(threads);
  dw_.resize(threads);
  db_.resize(threads);
  int team = 1;
#pragma omp parallel
  {
    const int t = omp_get_thread_num();
    padded_[t].resize(g.padded());
    dw_[t].assign(w.size(), 0.0f);
    db_[t].assign(g.cout, 0.0f);
    if (dx != nullptr) padded_grad_[t].resize(g.padded());
#pragma omp single nowait
    team = omp_get_num_threads();
#pragma omp for schedule(static)
    for (int64_t n = 0; n < x.dim(0); ++n) {
      const float* dy_n = dy.data() + n * g.outputs();
      PadImage(x.data() + n * g.image(), g, padded_[t].data());
      WeightGradImage(padded_[t].data(), g, dy_n, dw_[t].data(), db_[t].data());
      if (dx != nullptr) {
        InputGradImage(dy_n, g, w.data(), padded_grad_[t].data());
        CropImage(padded_grad_[t].data(), g, dx->data() + n * g.image());
      }
    }
  }
  // Each thread summed its own images; add the sums in thread order.
  EnsureShape(dw, w.shape());
  EnsureShape(db, {g.cout});
  std::copy(dw_[0].begin(), dw_[0].end(), dw->data());
  std::copy(db_[0].begin(), db_[0].end(), db->data());
  for (int i = 1; i < team; ++i) {
    for (int64_t k = 0; k < dw->size(); ++k) (*dw)[k] += dw_[i][k];
    for (int64_t k = 0; k < g.cout; ++k) (*db)[k] += db_[i][k];
  }
  return OkStatus();
}

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
