// SplitMix64's finalizer: a bijective mix of 64 bits in which every input bit
// changes about half the output bits. Stable across machines and builds:
// embedding keys are placed on ps tasks and their rows initialized from it.
// Not for security.
#ifndef PSTRAIN_CORE_SPLITMIX64_H_
#define PSTRAIN_CORE_SPLITMIX64_H_

#include <cstdint>

namespace pstrain {

inline uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A value in [0, n) from 64 mixed bits, without a division (Lemire's
// multiply-shift): uniform when `mixed` is.
inline uint64_t ReduceToRange(uint64_t mixed, uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(mixed) * n) >> 64);
}

}  // namespace pstrain

#endif  // PSTRAIN_CORE_SPLITMIX64_H_
