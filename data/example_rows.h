// Rows of TFRecord files of tf.train.Example (proto::ExampleInputSpec),
// read for a model of ids or for a model of columns. For a model of ids,
// sparse features as TF's VarLenFeature reads them: each example's
// int64_list values of a feature are its ids, a bytes_list's values are
// hashed into buckets (Fingerprint64, as TF's hash buckets), and a
// float_list feature may weight them one for one. For a model of columns, a
// table of the input columns its feature columns read. The label is an
// int64_list of one value. Stateless: thread-safe.
#ifndef PSTRAIN_DATA_EXAMPLE_ROWS_H_
#define PSTRAIN_DATA_EXAMPLE_ROWS_H_

#include <string>

#include "core/status.h"
#include "data/feature_batches.h"
#include "data/tabular_dataset.h"
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

// Every record of `path` as a row of spec.column (see proto::ExampleInputSpec):
// a numeric column takes its feature's one float or int64 value, a string
// column its bytes or int64 values (as decimal text), as many as there are.
// The errors of ReadExampleRows, and InvalidArgument as "FILE: record N:
// feature F: problem" for a numeric feature that is missing or holds other
// than one value, a string feature of floats.
StatusOr<TabularDataset> ReadExampleTable(const std::string& path,
                                          const proto::ExampleInputSpec& spec, int num_classes);

}  // namespace data
}  // namespace pstrain

#endif  // PSTRAIN_DATA_EXAMPLE_ROWS_H_
