#include "core/halves.h"

#include <sched.h>

#include <cstring>
#include <thread>

namespace pstrain {
namespace {

bool MayRunOnTwoCpus() {
  static const bool two = [] {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return std::thread::hardware_concurrency() > 1;
    return CPU_COUNT(&set) > 1;
  }();
  return two;
}

}  // namespace

void RunInHalves(int64_t n, int64_t min_split, const std::function<void(int64_t, int64_t)>& fn) {
  if (n < min_split || n < 2 || !MayRunOnTwoCpus()) return fn(0, n);
  const int64_t half = n / 2;
  std::thread other([&] { fn(half, n); });
  fn(0, half);
  other.join();
}

void CopyInHalves(void* dest, const void* src, size_t n) {
  // Split on a cache line, so that the two threads never write one line.
  constexpr int64_t kLine = 64;
  const int64_t lines = static_cast<int64_t>(n / kLine);
  RunInHalves(lines, kSplitElements * sizeof(float) / kLine, [&](int64_t begin, int64_t end) {
    const size_t from = begin * kLine;
    const size_t to = end == lines ? n : end * kLine;
    std::memcpy(static_cast<char*>(dest) + from, static_cast<const char*>(src) + from, to - from);
  });
}

}  // namespace pstrain
