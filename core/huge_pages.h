// Memory for large arrays read at random (embedding rows and their index):
// where a block is 2 MiB or more it is 2 MiB aligned and offered to the
// kernel for transparent huge pages (madvise), so that a lookup's random
// reads miss the TLB far less. Contents start uninitialized.
#ifndef PSTRAIN_CORE_HUGE_PAGES_H_
#define PSTRAIN_CORE_HUGE_PAGES_H_

#include <cstddef>
#include <cstdlib>
#include <memory>

namespace pstrain {

struct FreeMemory {
  void operator()(void* p) const { std::free(p); }
};

// `bytes` of memory, or null when the system has none.
void* AllocateForRandomReads(size_t bytes);

template <typename T>
std::unique_ptr<T[], FreeMemory> MakeRandomReadArray(size_t n) {
  return std::unique_ptr<T[], FreeMemory>(static_cast<T*>(AllocateForRandomReads(n * sizeof(T))));
}

}  // namespace pstrain

#endif  // PSTRAIN_CORE_HUGE_PAGES_H_
