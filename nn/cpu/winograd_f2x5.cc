#include "nn/cpu/winograd_f2x5.h"

#include <algorithm>

#include "nn/cpu/clones.h"

namespace pstrain {
namespace nn {
namespace cpu {
namespace winograd {
namespace {

// The one-dimensional transforms, each over n floats of every vector. The
// two-dimensional ones apply them along rows, then along columns.

// o = B^T a (6 -> 6).
PSTRAIN_CLONES void Bt(const float* const a[6], float* const o[6], int64_t n) {
#pragma omp simd
  for (int64_t c = 0; c < n; ++c) {
    const float a0 = a[0][c], a1 = a[1][c], a2 = a[2][c], a3 = a[3][c], a4 = a[4][c],
                a5 = a[5][c];
    o[0][c] = 4 * a0 - 5 * a2 + a4;
    o[1][c] = (a3 + a4) - 4 * (a1 + a2);
    o[2][c] = (a4 - a3) + 4 * (a1 - a2);
    o[3][c] = (a4 - a2) + 2 * (a3 - a1);
    o[4][c] = (a4 - a2) - 2 * (a3 - a1);
    o[5][c] = 4 * a1 - 5 * a3 + a5;
  }
}

// o = A^T a (6 -> 2), plus bias when not null.
PSTRAIN_CLONES void At(const float* const a[6], float* const o[2], const float* bias,
                       int64_t n) {
#pragma omp simd
  for (int64_t c = 0; c < n; ++c) {
    const float a0 = a[0][c], a1 = a[1][c], a2 = a[2][c], a3 = a[3][c], a4 = a[4][c],
                a5 = a[5][c];
    const float b = bias == nullptr ? 0.0f : bias[c];
    o[0][c] = a0 + a1 + a2 + a3 + a4 + b;
    o[1][c] = a1 - a2 + 2 * (a3 - a4) + a5 + b;
  }
}

// o = A a (2 -> 6).
PSTRAIN_CLONES void A(const float* const a[2], float* const o[6], int64_t n) {
#pragma omp simd
  for (int64_t c = 0; c < n; ++c) {
    const float a0 = a[0][c], a1 = a[1][c];
    o[0][c] = a0;
    o[1][c] = a0 + a1;
    o[2][c] = a0 - a1;
    o[3][c] = a0 + 2 * a1;
    o[4][c] = a0 - 2 * a1;
    o[5][c] = a1;
  }
}

// o = G a (5 -> 6).
PSTRAIN_CLONES void G(const float* const a[5], float* const o[6], int64_t n) {
#pragma omp simd
  for (int64_t c = 0; c < n; ++c) {
    const float a0 = a[0][c], a1 = a[1][c], a2 = a[2][c], a3 = a[3][c], a4 = a[4][c];
    const float even = a0 + a2 + a4, odd = a1 + a3;
    const float even4 = a0 + 4 * a2 + 16 * a4, odd4 = 2 * a1 + 8 * a3;
    o[0][c] = a0 / 4;
    o[1][c] = -(even + odd) / 6;
    o[2][c] = -(even - odd) / 6;
    o[3][c] = (even4 + odd4) / 24;
    o[4][c] = (even4 - odd4) / 24;
    o[5][c] = a4;
  }
}

// o = G^T a (6 -> 5).
PSTRAIN_CLONES void Gt(const float* const a[6], float* const o[5], int64_t n) {
#pragma omp simd
  for (int64_t c = 0; c < n; ++c) {
    const float a0 = a[0][c], a5 = a[5][c];
    const float p = a[1][c] + a[2][c], q = a[2][c] - a[1][c];
    const float r = a[3][c] + a[4][c], s = a[3][c] - a[4][c];
    o[0][c] = a0 / 4 - p / 6 + r / 24;
    o[1][c] = q / 6 + s / 12;
    o[2][c] = (r - p) / 6;
    o[3][c] = q / 6 + s / 3;
    o[4][c] = -p / 6 + 2 * r / 3 + a5;
  }
}

}  // namespace

void InputTransform(const PixelTile& d, int64_t channels, float* tmp, float* v,
                    int64_t v_stride) {
  // Along each row: e[r][b] = sum_s B^T[b][s] d[r][s].
  for (int r = 0; r < kTile; ++r) {
    const float* row = d.data + r * d.row_stride;
    const float* in[6];
    float* out[6];
    for (int s = 0; s < kTile; ++s) {
      in[s] = row + s * d.pixel_stride;
      out[s] = tmp + (r * kTile + s) * channels;
    }
    Bt(in, out, channels);
  }
  // Down each column: v[a][b] = sum_r B^T[a][r] e[r][b].
  for (int b = 0; b < kTile; ++b) {
    const float* in[6];
    float* out[6];
    for (int r = 0; r < kTile; ++r) {
      in[r] = tmp + (r * kTile + b) * channels;
      out[r] = v + (r * kTile + b) * v_stride;
    }
    Bt(in, out, channels);
  }
}

void OutputTransform(const float* m, int64_t m_stride, int64_t channels, const float* bias,
                     float* tmp, float* out, int64_t row_stride, int64_t pixel_stride, int rows,
                     int cols) {
  // Along each row: f[a][j] = sum_b m[a][b] A^T[j][b].
  for (int a = 0; a < kTile; ++a) {
    const float* in[6];
    for (int b = 0; b < kTile; ++b) in[b] = m + (a * kTile + b) * m_stride;
    float* const f[2] = {tmp + (a * 2) * channels, tmp + (a * 2 + 1) * channels};
    At(in, f, nullptr, channels);
  }
  // Down each column that exists: y[i][j] = sum_a A^T[i][a] f[a][j]; a
  // second row that does not exist goes to a scratch vector.
  float* discard = tmp + 12 * channels;
  for (int j = 0; j < cols; ++j) {
    const float* in[6];
    for (int a = 0; a < kTile; ++a) in[a] = tmp + (a * 2 + j) * channels;
    float* const y[2] = {out + j * pixel_stride,
                         rows > 1 ? out + row_stride + j * pixel_stride : discard};
    At(in, y, bias, channels);
  }
}

void OutputGradTransform(const PixelTile& dy, int rows, int cols, int64_t channels, float* tmp,
                         float* z, int64_t z_stride) {
  float* zeros = tmp + 12 * channels;
  std::fill(zeros, zeros + channels, 0.0f);
  // Along each row: r[i][b] = sum_j dY[i][j] A^T[j][b].
  for (int i = 0; i < kOutTile; ++i) {
    const float* in[2];
    for (int j = 0; j < kOutTile; ++j) {
      in[j] = i < rows && j < cols ? dy.data + i * dy.row_stride + j * dy.pixel_stride : zeros;
    }
    float* out[6];
    for (int b = 0; b < kTile; ++b) out[b] = tmp + (i * kTile + b) * channels;
    A(in, out, channels);
  }
  // Down each column: z[a][b] = sum_i A^T[i][a] r[i][b].
  for (int b = 0; b < kTile; ++b) {
    const float* const in[2] = {tmp + b * channels, tmp + (kTile + b) * channels};
    float* out[6];
    for (int a = 0; a < kTile; ++a) out[a] = z + (a * kTile + b) * z_stride;
    A(in, out, channels);
  }
}

void WeightTransform(const float* w, int64_t in, int64_t out, float* tmp, float* u) {
  for (int64_t i = 0; i < in; ++i) {
    // Along each kernel row: h[ky][b] = sum_kx g[ky][kx] G[b][kx].
    for (int ky = 0; ky < kKernel; ++ky) {
      const float* g[5];
      float* h[6];
      for (int kx = 0; kx < kKernel; ++kx) g[kx] = w + ((ky * kKernel + kx) * in + i) * out;
      for (int b = 0; b < kTile; ++b) h[b] = tmp + (ky * kTile + b) * out;
      G(g, h, out);
    }
    // Down each column: u[a][b] = sum_ky G[a][ky] h[ky][b].
    for (int b = 0; b < kTile; ++b) {
      const float* h[5];
      float* o[6];
      for (int ky = 0; ky < kKernel; ++ky) h[ky] = tmp + (ky * kTile + b) * out;
      for (int a = 0; a < kTile; ++a) o[a] = u + ((a * kTile + b) * in + i) * out;
      G(h, o, out);
    }
  }
}

void WeightGradTransform(const float* du, int64_t in, int64_t out, float* tmp, float* dw) {
  for (int64_t i = 0; i < in; ++i) {
    // Along each row: s[a][kx] = sum_b du[a][b] G[b][kx].
    for (int a = 0; a < kTile; ++a) {
      const float* d[6];
      float* s[5];
      for (int b = 0; b < kTile; ++b) d[b] = du + ((a * kTile + b) * in + i) * out;
      for (int kx = 0; kx < kKernel; ++kx) s[kx] = tmp + (a * kKernel + kx) * out;
      Gt(d, s, out);
    }
    // Down each column: dw[ky][kx] = sum_a G[a][ky] s[a][kx].
    for (int kx = 0; kx < kKernel; ++kx) {
      const float* s[6];
      float* o[5];
      for (int a = 0; a < kTile; ++a) s[a] = tmp + (a * kKernel + kx) * out;
      for (int ky = 0; ky < kKernel; ++ky) o[ky] = dw + ((ky * kKernel + kx) * in + i) * out;
      Gt(s, o, out);
    }
  }
}

}  // namespace winograd
}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
