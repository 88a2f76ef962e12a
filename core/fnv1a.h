// FNV-1a, 64 bits: a stable hash of text, the same on every machine and
// build (placement fingerprints, per-variable seeds). Not for security.
#ifndef PSTRAIN_CORE_FNV1A_H_
#define PSTRAIN_CORE_FNV1A_H_

#include <cstdint>
#include <string_view>

namespace pstrain {

inline uint64_t Fnv1a64(std::string_view text) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

}  // namespace pstrain

#endif  // PSTRAIN_CORE_FNV1A_H_
