#include "nn/cpu/winograd_f4x5.h"

#include <algorithm>

#include "nn/cpu/clones.h"

namespace pstrain {
namespace nn {
namespace cpu {
namespace winograd {
namespace {

// The matrices, row-major, as the Toom-Cook construction gives them for the
// points 0, 1, -1, 2, -2, 1/2, -1/2 and infinity (checked against direct
// sums in winograd_conv_test.cc).
constexpr float kBt[kTile * kTile] = {
    -1, 0,        21.f / 4, 0,         -21.f / 4, 0,         1, 0,  //
    0,  1,        1,        -17.f / 4, -17.f / 4, 1,         1, 0,  //
    0,  -1,       1,        17.f / 4,  -17.f / 4, -1,        1, 0,  //
    0,  1.f / 2,  1.f / 4,  -5.f / 2,  -5.f / 4,  2,         1, 0,  //
    0,  -1.f / 2, 1.f / 4,  5.f / 2,   -5.f / 4,  -2,        1, 0,  //
    0,  2,        4,        -5.f / 2,  -5,        1.f / 2,   1, 0,  //
    0,  -2,       4,        5.f / 2,   -5,        -1.f / 2,  1, 0,  //
    0,  -1,       0,        21.f / 4,  0,         -21.f / 4, 0, 1,
};
constexpr float kAt[kOutTile * kTile] = {
    1, 1, 1,  1, 1,  1,       1,        0,  //
    0, 1, -1, 2, -2, 1.f / 2, -1.f / 2, 0,  //
    0, 1, 1,  4, 4,  1.f / 4, 1.f / 4,  0,  //
    0, 1, -1, 8, -8, 1.f / 8, -1.f / 8, 1,
};
constexpr float kG[kTile * kKernel] = {
    -1,        0,          0,        0,         0,         //
    -2.f / 9,  -2.f / 9,   -2.f / 9, -2.f / 9,  -2.f / 9,  //
    -2.f / 9,  2.f / 9,    -2.f / 9, 2.f / 9,   -2.f / 9,  //
    1.f / 90,  1.f / 45,   2.f / 45, 4.f / 45,  8.f / 45,  //
    1.f / 90,  -1.f / 45,  2.f / 45, -4.f / 45, 8.f / 45,  //
    32.f / 45, 16.f / 45,  8.f / 45, 4.f / 45,  2.f / 45,  //
    32.f / 45, -16.f / 45, 8.f / 45, -4.f / 45, 2.f / 45,  //
    0,         0,          0,        0,         1,
};

// o[k][c] = sum_j M(k, j) a[j][c] (+ bias[c]) for c < n, where M is O x I,
// read from m row-major, or from its transpose (m is I x O) when
// kTransposed. Inlined into each caller with m one of the constant matrices
// above, so the compiler drops the zero coefficients and the multiplications
// by one, and vectorizes across c.
template <int O, int I, bool kTransposed, bool kBias = false>
__attribute__((always_inline)) inline void MatVec(const float* m, const float* const* a,
                                                  float* const* o, const float* bias, int64_t n) {
#pragma omp simd
  for (int64_t c = 0; c < n; ++c) {
    float x[I];
#pragma GCC unroll 8
    for (int j = 0; j < I; ++j) x[j] = a[j][c];
#pragma GCC unroll 8
    for (int k = 0; k < O; ++k) {
      float s = kBias ? bias[c] : 0.0f;
#pragma GCC unroll 8
      for (int j = 0; j < I; ++j) {
        const float coef = kTransposed ? m[j * O + k] : m[k * I + j];
        if (coef != 0.0f) s += coef * x[j];
      }
      o[k][c] = s;
    }
  }
}

}  // namespace

PSTRAIN_CLONES void InputTransform(const PixelTile& d, int64_t channels, float* tmp, float* v,
                                   int64_t v_stride) {
  const float* in[kTile];
  float* out[kTile];
  // Along each row: e[r][b] = sum_s B^T[b][s] d[r][s].
  for (int r = 0; r < kTile; ++r) {
    for (int s = 0; s < kTile; ++s) {
      in[s] = d.data + r * d.row_stride + s * d.pixel_stride;
      out[s] = tmp + (r * kTile + s) * channels;
    }
    MatVec<kTile, kTile, false>(kBt, in, out, nullptr, channels);
  }
  // Down each column: v[a][b] = sum_r B^T[a][r] e[r][b].
  for (int b = 0; b < kTile; ++b) {
    for (int r = 0; r < kTile; ++r) {
      in[r] = tmp + (r * kTile + b) * channels;
      out[r] = v + (r * kTile + b) * v_stride;
    }
    MatVec<kTile, kTile, false>(kBt, in, out, nullptr, channels);
  }
}

PSTRAIN_CLONES void OutputTransform(const float* m, int64_t m_stride, int64_t channels,
                                    const float* bias, float* tmp, float* out, int64_t row_stride,
                                    int64_t pixel_stride, int rows, int cols) {
  const float* in[kTile];
  float* f[kOutTile];
  // Along each row: f[a][j] = sum_b A^T[j][b] m[a][b].
  for (int a = 0; a < kTile; ++a) {
    for (int b = 0; b < kTile; ++b) in[b] = m + (a * kTile + b) * m_stride;
    for (int j = 0; j < kOutTile; ++j) f[j] = tmp + (a * kOutTile + j) * channels;
    MatVec<kOutTile, kTile, false>(kAt, in, f, nullptr, channels);
  }
  // Down each column that exists: y[i][j] = sum_a A^T[i][a] f[a][j]; rows
  // past the image's edge go to scratch vectors.
  float* discard = tmp + kTile * kOutTile * channels;
  for (int j = 0; j < cols; ++j) {
    for (int a = 0; a < kTile; ++a) in[a] = tmp + (a * kOutTile + j) * channels;
    float* y[kOutTile];
    for (int i = 0; i < kOutTile; ++i) {
      y[i] = i < rows ? out + i * row_stride + j * pixel_stride : discard + (i - 1) * channels;
    }
    if (bias != nullptr) {
      MatVec<kOutTile, kTile, false, true>(kAt, in, y, bias, channels);
    } else {
      MatVec<kOutTile, kTile, false>(kAt, in, y, nullptr, channels);
    }
  }
}

PSTRAIN_CLONES void OutputGradTransform(const PixelTile& dy, int rows, int cols, int64_t channels,
                                        float* tmp, float* z, int64_t z_stride) {
  float* zeros = tmp + kOutTile * kTile * channels;
  std::fill(zeros, zeros + channels, 0.0f);
  const float* in[kOutTile];
  float* out[kTile];
  // Along each row: r[i][b] = sum_j A[b][j] dY[i][j], A = (A^T)^T.
  for (int i = 0; i < kOutTile; ++i) {
    for (int j = 0; j < kOutTile; ++j) {
      in[j] = i < rows && j < cols ? dy.data + i * dy.row_stride + j * dy.pixel_stride : zeros;
    }
    for (int b = 0; b < kTile; ++b) out[b] = tmp + (i * kTile + b) * channels;
    MatVec<kTile, kOutTile, true>(kAt, in, out, nullptr, channels);
  }
  // Down each column: z[a][b] = sum_i A[a][i] r[i][b].
  for (int b = 0; b < kTile; ++b) {
    for (int i = 0; i < kOutTile; ++i) in[i] = tmp + (i * kTile + b) * channels;
    for (int a = 0; a < kTile; ++a) out[a] = z + (a * kTile + b) * z_stride;
    MatVec<kTile, kOutTile, true>(kAt, in, out, nullptr, channels);
  }
}

PSTRAIN_CLONES void WeightTransform(const float* w, int64_t in, int64_t out, float* tmp, float* u) {
  const float* src[kKernel];
  float* dst[kTile];
  for (int64_t i = 0; i < in; ++i) {
    // Along each kernel row: h[ky][b] = sum_kx G[b][kx] g[ky][kx].
    for (int ky = 0; ky < kKernel; ++ky) {
      for (int kx = 0; kx < kKernel; ++kx) src[kx] = w + ((ky * kKernel + kx) * in + i) * out;
      for (int b = 0; b < kTile; ++b) dst[b] = tmp + (ky * kTile + b) * out;
      MatVec<kTile, kKernel, false>(kG, src, dst, nullptr, out);
    }
    // Down each column: u[a][b] = sum_ky G[a][ky] h[ky][b].
    for (int b = 0; b < kTile; ++b) {
      for (int ky = 0; ky < kKernel; ++ky) src[ky] = tmp + (ky * kTile + b) * out;
      for (int a = 0; a < kTile; ++a) dst[a] = u + ((a * kTile + b) * in + i) * out;
      MatVec<kTile, kKernel, false>(kG, src, dst, nullptr, out);
    }
  }
}

PSTRAIN_CLONES void WeightGradTransform(const float* du, int64_t in, int64_t out, float* tmp,
                                        float* dw) {
  const float* src[kTile];
  float* dst[kKernel];
  for (int64_t i = 0; i < in; ++i) {
    // Along each row: s[a][kx] = sum_b G[b][kx] du[a][b].
    for (int a = 0; a < kTile; ++a) {
      for (int b = 0; b < kTile; ++b) src[b] = du + ((a * kTile + b) * in + i) * out;
      for (int kx = 0; kx < kKernel; ++kx) dst[kx] = tmp + (a * kKernel + kx) * out;
      MatVec<kKernel, kTile, true>(kG, src, dst, nullptr, out);
    }
    // Down each column: dw[ky][kx] = sum_a G[a][ky] s[a][kx].
    for (int kx = 0; kx < kKernel; ++kx) {
      for (int a = 0; a < kTile; ++a) src[a] = tmp + (a * kKernel + kx) * out;
      for (int ky = 0; ky < kKernel; ++ky) dst[ky] = dw + ((ky * kKernel + kx) * in + i) * out;
      MatVec<kKernel, kTile, true>(kG, src, dst, nullptr, out);
    }
  }
}

}  // namespace winograd
}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
