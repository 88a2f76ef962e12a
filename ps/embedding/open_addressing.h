// What KeyIndex and RowIndex share: the rules of an open-addressing table
// with linear probing that grows by half and erases by backward shift.
#ifndef PSTRAIN_PS_EMBEDDING_OPEN_ADDRESSING_H_
#define PSTRAIN_PS_EMBEDDING_OPEN_ADDRESSING_H_

#include <algorithm>
#include <cstdint>

namespace pstrain {
namespace open_addressing {

constexpr double kMaxLoad = 0.7;
constexpr uint64_t kMinCapacity = 16;

// The capacity that holds `keys` within kMaxLoad, from `capacity` grown by
// half as often as needed (never below kMinCapacity).
inline uint64_t CapacityFor(uint64_t capacity, int64_t keys) {
  capacity = std::max(capacity, kMinCapacity);
  while (static_cast<double>(keys) > kMaxLoad * static_cast<double>(capacity)) {
    capacity += capacity / 2;
  }
  return capacity;
}

// Backward shift: whether the entry at `i`, whose key's home is `home`,
// moves into the `hole` before it in its run, i.e. the hole lies
// (cyclically) on its way from its home.
inline bool MovesIntoHole(uint64_t home, uint64_t hole, uint64_t i) {
  return hole <= i ? (home <= hole || home > i) : (home <= hole && home > i);
}

}  // namespace open_addressing
}  // namespace pstrain

#endif  // PSTRAIN_PS_EMBEDDING_OPEN_ADDRESSING_H_
