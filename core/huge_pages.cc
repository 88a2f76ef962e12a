#include "core/huge_pages.h"

#include <sys/mman.h>

#include <new>

namespace pstrain {

void* AllocateForRandomReads(size_t bytes) {
  constexpr size_t kHugePage = size_t{2} << 20;
  if (bytes < kHugePage) {
    void* p = std::malloc(bytes == 0 ? 1 : bytes);
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }
  const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, rounded);
  if (p == nullptr) throw std::bad_alloc();
  // A hint: where the kernel has no huge pages to give, nothing changes.
  (void)madvise(p, rounded, MADV_HUGEPAGE);
  return p;
}

}  // namespace pstrain
