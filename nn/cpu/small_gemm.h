// SmallGemm: C (+)= A B for the many small products of a Winograd
// convolution, where one call is too small for a BLAS's threading and
// packing to pay off and A may be read transposed in place.
//
// A is rows x depth, element (i, q) at a[i * a_row_stride + q * a_col_stride];
// B is depth x cols, row-major with leading dimension ldb; C is rows x cols,
// row-major with leading dimension ldc. With accumulate, C += A B, else
// C = A B. Single-threaded: the callers split the work.
//
// On a CPU with AVX-512 it runs an 8 x 32 register-blocked kernel, with AVX2
// and FMA a 6 x 16 one (the classic shape for 16 vector registers of 8
// floats); elsewhere, plain loops.
#ifndef PSTRAIN_NN_CPU_SMALL_GEMM_H_
#define PSTRAIN_NN_CPU_SMALL_GEMM_H_

#include <cstdint>

namespace pstrain {
namespace nn {
namespace cpu {

struct GemmOperands {
  int64_t rows, cols, depth;
  const float* a;
  int64_t a_row_stride, a_col_stride;
  const float* b;
  int64_t ldb;
  float* c;
  int64_t ldc;
  bool accumulate;
};

// kBest picks the widest kernel this CPU runs; the others (for the tests and
// benchmarks) force one, and only where SmallGemmSupports says so.
enum class GemmPath { kBest, kAvx512, kAvx2, kPortable };

void SmallGemm(const GemmOperands& g, GemmPath path = GemmPath::kBest);

bool SmallGemmSupports(GemmPath path);

// "best", "avx512", "avx2" or "portable".
const char* GemmPathName(GemmPath path);

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_CPU_SMALL_GEMM_H_
