#include "chief/summary/histogram.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

namespace pstrain {

const std::vector<double>& DefaultBucketLimits() {
  static const std::vector<double>* const limits = [] {
    std::vector<double> positive;
    for (double v = 1.0e-12; v < 1.0e20; v *= 1.1) positive.push_back(v);
    positive.push_back(DBL_MAX);
    auto* all = new std::vector<double>;
    for (auto it = positive.rbegin(); it != positive.rend(); ++it) all->push_back(-*it);
    all->push_back(0.0);
    all->insert(all->end(), positive.begin(), positive.end());
    return all;
  }();
  return *limits;
}

namespace {

// The bucket of the smallest float whose top 16 bits (sign, exponent and 7
// bits of mantissa) are the index. A value's bucket is at or after that of
// its cell's smallest value, and a cell spans less than the 1.1 ratio of
// two limits, so a step or two from there finds it: a binary search over
// the 1,551 limits for each of a layer's millions of values took the chief
// a core-second every summary.
const std::vector<uint16_t>& FirstBucketOfCell() {
  static const std::vector<uint16_t>* const first = [] {
    const std::vector<double>& limits = DefaultBucketLimits();
    auto* table = new std::vector<uint16_t>(1 << 16, 0);
    for (uint32_t cell = 0; cell < (1u << 16); ++cell) {
      // Negative cells' smallest value has the largest magnitude.
      const uint32_t bits = cell << 16 | (cell & 0x8000 ? 0xFFFFu : 0u);
      float smallest;
      std::memcpy(&smallest, &bits, sizeof(smallest));
      if (!std::isfinite(smallest)) continue;  // never looked up
      (*table)[cell] = static_cast<uint16_t>(
          std::upper_bound(limits.begin(), limits.end(), static_cast<double>(smallest)) -
          limits.begin());
    }
    return table;
  }();
  return *first;
}

}  // namespace

StatusOr<tensorflow::HistogramProto> MakeHistogram(const float* values, size_t n) {
  const std::vector<double>& limits = DefaultBucketLimits();
  const std::vector<uint16_t>& first = FirstBucketOfCell();
  std::vector<double> counts(limits.size(), 0.0);
  double min = DBL_MAX, max = -DBL_MAX, sum = 0.0, sum_squares = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double v = values[i];
    if (!std::isfinite(v)) {
      return InvalidArgument("histogram value " + std::to_string(i) + " is not finite");
    }
    // The first limit above v (every float is below the last, DBL_MAX).
    uint32_t bits;
    std::memcpy(&bits, &values[i], sizeof(bits));
    size_t b = first[bits >> 16];
    while (limits[b] <= v) ++b;
    counts[b] += 1.0;
    min = std::min(min, v);
    max = std::max(max, v);
    sum += v;
    sum_squares += v * v;
  }

  tensorflow::HistogramProto proto;
  proto.set_min(min);
  proto.set_max(max);
  proto.set_num(static_cast<double>(n));
  proto.set_sum(sum);
  proto.set_sum_squares(sum_squares);
  for (size_t i = 0; i < counts.size();) {
    double end = limits[i];
    const double count = counts[i++];
    if (count <= 0.0) {
      while (i < counts.size() && counts[i] <= 0.0) end = limits[i++];
    }
    proto.add_bucket_limit(end);
    proto.add_bucket(count);
  }
  return proto;
}

}  // namespace pstrain
