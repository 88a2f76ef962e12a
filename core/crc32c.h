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

}  // namespace crc32c
}  // namespace pstrain

#endif  // PSTRAIN_CORE_CRC32C_H_
