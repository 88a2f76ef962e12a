// bfloat16: float32's sign, 8-bit exponent and top 7 mantissa bits, the wire
// format of `--wire_dtype=bfloat16` (half the bytes of float32, the same
// range). Conversions written once for host and device (PSTRAIN_HD).
#ifndef PSTRAIN_CORE_BFLOAT16_H_
#define PSTRAIN_CORE_BFLOAT16_H_

#include <cstdint>
#include <cstring>

#include "core/device_fn.h"

namespace pstrain {

// Rounds to the nearest bfloat16, ties to even (as TensorFlow's
// float-to-bfloat16 cast does); a NaN stays a (quiet) NaN.
PSTRAIN_HD inline uint16_t FloatToBfloat16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  const uint32_t quiet_nan = (u >> 16) | 0x0040u;
  // A select, not a branch: the array loops vectorize.
  return static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded);
}

// Exact: every bfloat16 is a float32.
PSTRAIN_HD inline float Bfloat16ToFloat(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

// Whole arrays (vector loops).
void ToBfloat16(const float* in, int64_t n, uint16_t* out);
void FromBfloat16(const uint16_t* in, int64_t n, float* out);

}  // namespace pstrain

#endif  // PSTRAIN_CORE_BFLOAT16_H_
