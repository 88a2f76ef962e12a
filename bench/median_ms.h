// MedianMs: how the kernel benchmarks time one pass: 3 untimed runs, then
// the median of `reps` timed ones, in milliseconds.
#ifndef PSTRAIN_BENCH_MEDIAN_MS_H_
#define PSTRAIN_BENCH_MEDIAN_MS_H_

#include <chrono>
#include <functional>
#include <vector>

#include "bench/quantile.h"

namespace pstrain {
namespace bench {

inline double MedianMs(const std::function<void()>& fn, int reps) {
  for (int i = 0; i < 3; ++i) fn();
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  return Quantile(&ms, 0.5);
}

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_MEDIAN_MS_H_
