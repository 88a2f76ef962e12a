// Histograms for summaries, bucketed as TensorFlow's
// tensorflow/core/lib/histogram/histogram.h does by default, so TensorBoard
// shows them as it shows TensorFlow's.
#ifndef PSTRAIN_CHIEF_SUMMARY_HISTOGRAM_H_
#define PSTRAIN_CHIEF_SUMMARY_HISTOGRAM_H_

#include <cstddef>
#include <vector>

#include "core/status.h"
#include "proto/summary.pb.h"

namespace pstrain {

// TensorFlow's default bucket limits, ascending: -DBL_MAX, the negated
// sequence 1e-12 * 1.1^k (k = 0, 1, ... while below 1e20) in descending
// magnitude, 0, the same sequence ascending, DBL_MAX. Bucket i counts the
// values in [limit(i - 1), limit(i)). Built once; thread-safe.
const std::vector<double>& DefaultBucketLimits();

// The histogram of values[0, n): min, max, num, sum, sum_squares, and the
// buckets over DefaultBucketLimits() with each run of empty buckets folded
// into one (TF's EncodeToProto without preserve_zero_buckets), so the bucket
// counts sum to num. With n == 0: min DBL_MAX, max -DBL_MAX and one empty
// bucket, as TensorFlow. InvalidArgument if any value is NaN or infinite
// (TensorFlow's histogram op refuses them too). Thread-safe.
StatusOr<tensorflow::HistogramProto> MakeHistogram(const float* values, size_t n);

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_SUMMARY_HISTOGRAM_H_
