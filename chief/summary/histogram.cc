#include "chief/summary/histogram.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
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

StatusOr<tensorflow::HistogramProto> MakeHistogram(const float* values, size_t n) {
  const std::vector<double>& limits = DefaultBucketLimits();
  std::vector<double> counts(limits.size(), 0.0);
  double min = DBL_MAX, max = -DBL_MAX, sum = 0.0, sum_squares = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double v = values[i];
    if (!std::isfinite(v)) {
      return InvalidArgument("histogram value " + std::to_string(i) + " is not finite");
    }
    // The first limit above v; DBL_MAX itself lands in the last bucket.
    const size_t b = std::upper_bound(limits.begin(), limits.end(), v) - limits.begin();
    counts[std::min(b, limits.size() - 1)] += 1.0;
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
