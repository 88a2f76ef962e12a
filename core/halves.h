// Work over a large range split between two threads: the caller's and one
// more. On a host where the tasks of a step take turns (a worker waits while
// its ps applies, the ps waits while the worker computes), the other core is
// idle at that moment, and a memory-bound pass over megabytes (an update
// rule, a copy into or out of shared memory) goes faster on two.
#ifndef PSTRAIN_CORE_HALVES_H_
#define PSTRAIN_CORE_HALVES_H_

#include <cstddef>
#include <cstdint>
#include <functional>

namespace pstrain {

// Ranges shorter than this run in one call: a thread costs some tens of
// microseconds, about what a pass over a million floats saves.
constexpr int64_t kSplitElements = int64_t{1} << 20;

// Runs fn(begin, end) over [0, n): as fn(0, n/2) here and fn(n/2, n) on a
// second thread (one the process keeps) when n >= min_split and this
// process may run on two CPUs or more, else as fn(0, n); also as fn(0, n)
// while another caller has the second thread. fn sets its own thread's floating-point mode
// (core/flush_denormals.h) where it matters.
void RunInHalves(int64_t n, int64_t min_split, const std::function<void(int64_t, int64_t)>& fn);

// memcpy of n bytes, in halves for kSplitElements floats' worth or more.
void CopyInHalves(void* dest, const void* src, size_t n);

}  // namespace pstrain

#endif  // PSTRAIN_CORE_HALVES_H_
