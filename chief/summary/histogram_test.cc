#include "chief/summary/histogram.h"
#include "core/testing/status_assertions.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

namespace pstrain {
namespace {

TEST(Histogram, DefaultLimitsAreTensorFlows) {
  const std::vector<double>& limits = DefaultBucketLimits();
  // 1e-12 * 1.1^k below 1e20: k = 0..773, plus DBL_MAX, on each side of 0.
  ASSERT_EQ(limits.size(), 2u * 775u + 1u);
  EXPECT_TRUE(std::is_sorted(limits.begin(), limits.end()));
  EXPECT_EQ(limits.front(), -DBL_MAX);
  EXPECT_EQ(limits.back(), DBL_MAX);
  EXPECT_EQ(limits[775], 0.0);
  EXPECT_EQ(limits[776], 1e-12);
  EXPECT_DOUBLE_EQ(limits[777], 1.1e-12);
  for (size_t i = 0; i < limits.size(); ++i) EXPECT_EQ(limits[i], -limits[limits.size() - 1 - i]);
}

TEST(Histogram, BucketsSumToNum) {
  std::vector<float> values;
  for (int i = -500; i < 500; ++i) values.push_back(std::sin(i * 0.1f) * std::pow(10.0f, i % 7));
  StatusOr<tensorflow::HistogramProto> h = MakeHistogram(values.data(), values.size());
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->num(), values.size());
  EXPECT_EQ(h->bucket_size(), h->bucket_limit_size());
  EXPECT_EQ(std::accumulate(h->bucket().begin(), h->bucket().end(), 0.0), h->num());
  EXPECT_EQ(h->min(), *std::min_element(values.begin(), values.end()));
  EXPECT_EQ(h->max(), *std::max_element(values.begin(), values.end()));
  EXPECT_TRUE(std::is_sorted(h->bucket_limit().begin(), h->bucket_limit().end()));
}

TEST(Histogram, StatisticsAndBucketEdges) {
  // 0 lies in [0, 1e-12); 1e-12 in [1e-12, 1.1e-12); -1 in [-1.000..., -0.9...).
  const float values[] = {0.0f, 1.0f, -1.0f, 2.0f};
  StatusOr<tensorflow::HistogramProto> h = MakeHistogram(values, 4);
  PS_ASSERT_OK(h);
  EXPECT_EQ(h->min(), -1.0);
  EXPECT_EQ(h->max(), 2.0);
  EXPECT_EQ(h->num(), 4.0);
  EXPECT_EQ(h->sum(), 2.0);
  EXPECT_EQ(h->sum_squares(), 6.0);
  // Empty runs fold into one bucket, so buckets alternate empty / full.
  std::vector<double> full_limits;
  for (int i = 0; i < h->bucket_size(); ++i) {
    if (h->bucket(i) > 0) {
      EXPECT_EQ(h->bucket(i), 1.0);
      full_limits.push_back(h->bucket_limit(i));
    }
  }
  ASSERT_EQ(full_limits.size(), 4u);
  EXPECT_EQ(full_limits[1], 1e-12);  // the bucket [0, 1e-12) holds 0
  EXPECT_GT(full_limits[0], -1.0);   // -1 sits just below its upper limit
  EXPECT_LE(full_limits[0], -1.0 / 1.1);
  EXPECT_EQ(h->bucket_limit(h->bucket_size() - 1), DBL_MAX);
}

// The upper limit of the one full bucket of a histogram of v alone.
double LimitAbove(float v) {
  StatusOr<tensorflow::HistogramProto> h = MakeHistogram(&v, 1);
  EXPECT_TRUE(h.ok()) << h.status().ToString();
  for (int i = 0; i < h->bucket_size(); ++i) {
    if (h->bucket(i) > 0) return h->bucket_limit(i);
  }
  return 0;
}

TEST(Histogram, EveryFloatLandsInTheBucketOfTheFirstLimitAboveIt) {
  const std::vector<double>& limits = DefaultBucketLimits();
  const auto expected = [&](float v) {
    return *std::upper_bound(limits.begin(), limits.end(), static_cast<double>(v));
  };
  std::vector<float> values = {0.0f,
                               -0.0f,
                               FLT_MIN,
                               -FLT_MIN,
                               FLT_MAX,
                               -FLT_MAX,
                               std::numeric_limits<float>::denorm_min(),
                               1e-13f,
                               -1e-13f};
  // Each limit and its float neighbours: where a value meets its edge.
  for (double limit : limits) {
    if (std::fabs(limit) > FLT_MAX) continue;
    const float f = static_cast<float>(limit);
    values.insert(values.end(), {f, std::nextafter(f, -FLT_MAX), std::nextafter(f, FLT_MAX)});
  }
  std::mt19937 rng(7);
  while (values.size() < 20000) {
    const uint32_t bits = static_cast<uint32_t>(rng());
    float v;
    std::memcpy(&v, &bits, sizeof(v));
    if (std::isfinite(v)) values.push_back(v);
  }
  for (float v : values) ASSERT_EQ(LimitAbove(v), expected(v)) << "value " << v;
}

TEST(Histogram, EmptyInputHasOneEmptyBucket) {
  StatusOr<tensorflow::HistogramProto> h = MakeHistogram(nullptr, 0);
  PS_ASSERT_OK(h);
  EXPECT_EQ(h->num(), 0.0);
  EXPECT_EQ(h->min(), DBL_MAX);
  EXPECT_EQ(h->max(), -DBL_MAX);
  ASSERT_EQ(h->bucket_size(), 1);
  EXPECT_EQ(h->bucket_limit(0), DBL_MAX);
  EXPECT_EQ(h->bucket(0), 0.0);
}

TEST(Histogram, RejectsNonFinite) {
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()}) {
    const float values[] = {1.0f, bad};
    EXPECT_EQ(MakeHistogram(values, 2).status().code(), Code::kInvalidArgument);
  }
}

}  // namespace
}  // namespace pstrain
