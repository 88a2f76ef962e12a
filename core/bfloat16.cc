#include "core/bfloat16.h"

namespace pstrain {

void ToBfloat16(const float* in, int64_t n, uint16_t* out) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = FloatToBfloat16(in[i]);
}

void FromBfloat16(const uint16_t* in, int64_t n, float* out) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = Bfloat16ToFloat(in[i]);
}

}  // namespace pstrain
