// Quantile: the p-quantile of measured values, as the benchmarks report
// their latencies (p50, p99): the value at index p * n (the last for p near
// 1) of the values in order.
#ifndef PSTRAIN_BENCH_QUANTILE_H_
#define PSTRAIN_BENCH_QUANTILE_H_

#include <algorithm>
#include <vector>

namespace pstrain {
namespace bench {

// The p-quantile (0..1) of `values`, which it reorders; 0 when empty.
inline double Quantile(std::vector<double>* values, double p) {
  if (values->empty()) return 0;
  const size_t at = std::min(values->size() - 1, static_cast<size_t>(p * values->size()));
  std::nth_element(values->begin(), values->begin() + at, values->end());
  return (*values)[at];
}

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_QUANTILE_H_
