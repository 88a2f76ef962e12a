// Prefetch: warms the cache line holding `p` for a read soon, the way to
// overlap a batch's random reads (ps/embedding/).
//
// A bare __builtin_prefetch is not enough: GCC (12, IPA mod/ref analysis)
// takes a function whose only effect is a prefetch for one without side
// effects and drops every call to it, so a helper that only prefetches
// ahead silently does nothing. The empty volatile asm is a side effect it
// keeps, and costs no instruction.
#ifndef PSTRAIN_CORE_PREFETCH_H_
#define PSTRAIN_CORE_PREFETCH_H_

namespace pstrain {

inline void Prefetch(const void* p) {
  __builtin_prefetch(p);
  asm volatile("");
}

}  // namespace pstrain

#endif  // PSTRAIN_CORE_PREFETCH_H_
