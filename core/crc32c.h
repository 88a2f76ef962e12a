// CRC32C (Castagnoli), as LevelDB, TFRecord and pstrain checkpoints use it.
#ifndef PSTRAIN_CORE_CRC32C_H_
#define PSTRAIN_CORE_CRC32C_H_

#include <cstddef>
#include <cstdint>

namespace pstrain {
namespace crc32c {

// CRC32C of data[0, n) continuing from the CRC32C `init` of earlier data.
uint32_t Extend(uint32_t init, const void* data, size_t n);
inline uint32_t Value(const void* data, size_t n) { return Extend(0, data, n); }

// The masking TFRecord applies to stored CRCs, so that a CRC of data that
// itself holds CRCs stays strong.
inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }
inline uint32_t Unmask(uint32_t masked) {
  uint32_t rot = masked - 0xa282ead8u;
  return (rot >> 17) | (rot << 15);
}

// Whether a stored CRC (unmasked) matches the one computed from the data.
// Fuzz builds (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, libFuzzer's
// convention) accept any, so that the fuzzer gets past the checksums to the
// parsers behind them; nothing else is built that way.
inline bool Matches(uint32_t stored, uint32_t computed) {
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
  (void)stored;
  (void)computed;
  return true;
#else
  return stored == computed;
#endif
}

}  // namespace crc32c
}  // namespace pstrain

#endif  // PSTRAIN_CORE_CRC32C_H_
