#include "nn/cpu/small_gemm.h"

#include <immintrin.h>

#include <algorithm>

namespace pstrain {
namespace nn {
namespace cpu {
namespace {

constexpr int kBlockRows = 6;
constexpr int kBlockCols = 16;  // two vectors of 8 floats

// Lanes [0, n) of a vector of 8 set, n clamped to [0, 8].
__attribute__((target("avx2"))) __m256i LaneMask(int n) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), lanes);
}

// One step of the depth: acc[i] += A(i, q) * (b0, b1) for i < R, A(i, q)
// at a[i] (and so advancing every row pointer by the column stride).
template <int R>
__attribute__((target("avx2,fma"), always_inline)) inline void Step(__m256 (&acc)[R][2],
                                                                    const float* (&a)[R],
                                                                    int64_t a_col_stride, __m256 b0,
                                                                    __m256 b1) {
#pragma GCC unroll 6
  for (int i = 0; i < R; ++i) {
    const __m256 av = _mm256_broadcast_ss(a[i]);
    a[i] += a_col_stride;
    acc[i][0] = _mm256_fmadd_ps(av, b0, acc[i][0]);
    acc[i][1] = _mm256_fmadd_ps(av, b1, acc[i][1]);
  }
}

// The R x cols block of C at (i0, j0), cols <= 16, held in 2R registers
// while the whole depth streams through: per step, two vectors of B and R
// broadcasts of A feed 2R fused multiply-adds.
template <int R>
__attribute__((target("avx2,fma"))) void Avx2Block(const GemmOperands& g, int64_t i0, int64_t j0,
                                                   int cols) {
  __m256 acc[R][2];
  const float* a[R];
#pragma GCC unroll 6
  for (int i = 0; i < R; ++i) {
    acc[i][0] = acc[i][1] = _mm256_setzero_ps();
    a[i] = g.a + (i0 + i) * g.a_row_stride;
  }
  const int64_t depth = g.depth, ldb = g.ldb, a_col_stride = g.a_col_stride;
  const float* b = g.b + j0;
  const __m256i mask0 = LaneMask(cols);
  const __m256i mask1 = LaneMask(cols - 8);
  const bool full = cols == kBlockCols;
  if (full) {
    for (int64_t q = 0; q < depth; ++q, b += ldb) {
      Step<R>(acc, a, a_col_stride, _mm256_loadu_ps(b), _mm256_loadu_ps(b + 8));
    }
  } else {
    for (int64_t q = 0; q < depth; ++q, b += ldb) {
      Step<R>(acc, a, a_col_stride, _mm256_maskload_ps(b, mask0), _mm256_maskload_ps(b + 8, mask1));
    }
  }
  float* c = g.c + i0 * g.ldc + j0;
#pragma GCC unroll 6
  for (int i = 0; i < R; ++i, c += g.ldc) {
    if (full) {
      if (g.accumulate) {
        acc[i][0] = _mm256_add_ps(acc[i][0], _mm256_loadu_ps(c));
        acc[i][1] = _mm256_add_ps(acc[i][1], _mm256_loadu_ps(c + 8));
      }
      _mm256_storeu_ps(c, acc[i][0]);
      _mm256_storeu_ps(c + 8, acc[i][1]);
    } else {
      if (g.accumulate) {
        acc[i][0] = _mm256_add_ps(acc[i][0], _mm256_maskload_ps(c, mask0));
        acc[i][1] = _mm256_add_ps(acc[i][1], _mm256_maskload_ps(c + 8, mask1));
      }
      _mm256_maskstore_ps(c, mask0, acc[i][0]);
      _mm256_maskstore_ps(c + 8, mask1, acc[i][1]);
    }
  }
}

void Avx2Gemm(const GemmOperands& g) {
  for (int64_t i0 = 0; i0 < g.rows; i0 += kBlockRows) {
    const int64_t rows = std::min<int64_t>(kBlockRows, g.rows - i0);
    for (int64_t j0 = 0; j0 < g.cols; j0 += kBlockCols) {
      const int cols = static_cast<int>(std::min<int64_t>(kBlockCols, g.cols - j0));
      switch (rows) {
        case 6:
          Avx2Block<6>(g, i0, j0, cols);
          break;
        case 5:
          Avx2Block<5>(g, i0, j0, cols);
          break;
        case 4:
          Avx2Block<4>(g, i0, j0, cols);
          break;
        case 3:
          Avx2Block<3>(g, i0, j0, cols);
          break;
        case 2:
          Avx2Block<2>(g, i0, j0, cols);
          break;
        default:
          Avx2Block<1>(g, i0, j0, cols);
          break;
      }
    }
  }
}

// The AVX-512 kernel: the same scheme with vectors of 16 floats, an 8 x 32
// block in 16 of the 32 registers, partial columns by mask.
constexpr int kBlockRows512 = 8;
constexpr int kBlockCols512 = 32;

template <int R>
__attribute__((target("avx512f"), always_inline)) inline void Step512(__m512 (&acc)[R][2],
                                                                      const float* (&a)[R],
                                                                      int64_t a_col_stride,
                                                                      __m512 b0, __m512 b1) {
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
    const __m512 av = _mm512_set1_ps(*a[i]);
    a[i] += a_col_stride;
    acc[i][0] = _mm512_fmadd_ps(av, b0, acc[i][0]);
    acc[i][1] = _mm512_fmadd_ps(av, b1, acc[i][1]);
  }
}

// Lanes [0, n) of a vector of 16 set, n clamped to [0, 16].
inline __mmask16 LaneMask512(int n) {
  return n <= 0 ? 0 : n >= 16 ? 0xffff : static_cast<__mmask16>((1u << n) - 1);
}

template <int R>
__attribute__((target("avx512f"))) void Avx512Block(const GemmOperands& g, int64_t i0, int64_t j0,
                                                    int cols) {
  __m512 acc[R][2];
  const float* a[R];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
    acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    a[i] = g.a + (i0 + i) * g.a_row_stride;
  }
  const int64_t depth = g.depth, ldb = g.ldb, a_col_stride = g.a_col_stride;
  const float* b = g.b + j0;
  const __mmask16 mask0 = LaneMask512(cols);
  const __mmask16 mask1 = LaneMask512(cols - 16);
  const bool full = cols == kBlockCols512;
  if (full) {
    for (int64_t q = 0; q < depth; ++q, b += ldb) {
      Step512<R>(acc, a, a_col_stride, _mm512_loadu_ps(b), _mm512_loadu_ps(b + 16));
    }
  } else {
    for (int64_t q = 0; q < depth; ++q, b += ldb) {
      Step512<R>(acc, a, a_col_stride, _mm512_maskz_loadu_ps(mask0, b),
                 _mm512_maskz_loadu_ps(mask1, b + 16));
    }
  }
  float* c = g.c + i0 * g.ldc + j0;
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i, c += g.ldc) {
    if (g.accumulate) {
      acc[i][0] = _mm512_add_ps(acc[i][0], _mm512_maskz_loadu_ps(mask0, c));
      acc[i][1] = _mm512_add_ps(acc[i][1], _mm512_maskz_loadu_ps(mask1, c + 16));
    }
    _mm512_mask_storeu_ps(c, mask0, acc[i][0]);
    _mm512_mask_storeu_ps(c + 16, mask1, acc[i][1]);
  }
}

void Avx512Gemm(const GemmOperands& g) {
  for (int64_t i0 = 0; i0 < g.rows; i0 += kBlockRows512) {
    const int64_t rows = std::min<int64_t>(kBlockRows512, g.rows - i0);
    for (int64_t j0 = 0; j0 < g.cols; j0 += kBlockCols512) {
      const int cols = static_cast<int>(std::min<int64_t>(kBlockCols512, g.cols - j0));
      switch (rows) {
        case 8:
          Avx512Block<8>(g, i0, j0, cols);
          break;
        case 7:
          Avx512Block<7>(g, i0, j0, cols);
          break;
        case 6:
          Avx512Block<6>(g, i0, j0, cols);
          break;
        case 5:
          Avx512Block<5>(g, i0, j0, cols);
          break;
        case 4:
          Avx512Block<4>(g, i0, j0, cols);
          break;
        case 3:
          Avx512Block<3>(g, i0, j0, cols);
          break;
        case 2:
          Avx512Block<2>(g, i0, j0, cols);
          break;
        default:
          Avx512Block<1>(g, i0, j0, cols);
          break;
      }
    }
  }
}

void PortableGemm(const GemmOperands& g) {
  for (int64_t i = 0; i < g.rows; ++i) {
    float* c = g.c + i * g.ldc;
    if (!g.accumulate) std::fill(c, c + g.cols, 0.0f);
    for (int64_t q = 0; q < g.depth; ++q) {
      const float av = g.a[i * g.a_row_stride + q * g.a_col_stride];
      const float* b = g.b + q * g.ldb;
      for (int64_t j = 0; j < g.cols; ++j) c[j] += av * b[j];
    }
  }
}

}  // namespace

bool SmallGemmSupports(GemmPath path) {
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  switch (path) {
    case GemmPath::kAvx512:
      return avx512;
    case GemmPath::kAvx2:
      return avx2;
    default:
      return true;
  }
}

const char* GemmPathName(GemmPath path) {
  switch (path) {
    case GemmPath::kBest:
      return "best";
    case GemmPath::kAvx512:
      return "avx512";
    case GemmPath::kAvx2:
      return "avx2";
    default:
      return "portable";
  }
}

void SmallGemm(const GemmOperands& g, GemmPath path) {
  if (path == GemmPath::kBest) {
    path = SmallGemmSupports(GemmPath::kAvx512) ? GemmPath::kAvx512
           : SmallGemmSupports(GemmPath::kAvx2) ? GemmPath::kAvx2
                                                : GemmPath::kPortable;
  }
  switch (path) {
    case GemmPath::kAvx512:
      Avx512Gemm(g);
      break;
    case GemmPath::kAvx2:
      Avx2Gemm(g);
      break;
    default:
      PortableGemm(g);
      break;
  }
}

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
