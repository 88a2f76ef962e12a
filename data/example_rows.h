// Rows of sparse features from TFRecord files of tf.train.Example
// (proto::ExampleInputSpec), as TF's VarLenFeature reads them: each
// example's int64_list values of a feature are its ids, a bytes_list's
// values are hashed into buckets (Fingerprint64, as TF's hash buckets), and
// a float_list feature may weight them one for one. The label is an
// int64_list of one value. Stateless: thread-safe.
#ifndef PSTRAIN_DATA_EXAMPLE_ROWS_H_
#define PSTRAIN_DATA_EXAMPLE_ROWS_H_

#include <string>

#include "core/status.h"
#include "data/feature_batches.h"
#include "proto/model.pb.h"

namespace pstrain {
namespace data {

// Every record of `path` as a row. NotFound for a missing file; DataLoss
// for a corrupt one (core/tfrecord.h); InvalidArgument as "FILE: record N:
// feature F: problem" for a record that is not an Example, a label that is
// missing, not one int64 or not in [0, num_classes), a feature of the wrong
// kind (int64 without hash_buckets, bytes with them), weights that are not
// one float per value; for a file without records.
StatusOr<FeaturizedRows> ReadExampleRows(const std::string& path,
                                         const proto::ExampleInputSpec& spec, int num_classes);

}  // namespace data
}  // namespace pstrain

#endif  // PSTRAIN_DATA_EXAMPLE_ROWS_H_
