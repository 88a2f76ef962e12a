// Labelled rows of a CSV file, read as TensorFlow's census tutorial reads
// UCI's adult.data and adult.test (its census_dataset.py cleans the files,
// then tf.decode_csv parses them):
//   - no header; a line that is empty or starts with "|" (UCI's comments,
//     adult.test's "|1x3 Cross validator") is skipped;
//   - values are separated by "," and the spaces around each are dropped
//     (UCI writes ", ");
//   - a string value is kept as written, "?" (UCI's missing value)
//     included, as the tutorial keeps it: a vocabulary list leaves it out
//     and a hash bucket hashes it;
//   - a numeric value that is "?" or empty is missing and reads as 0 (the
//     tutorial's record default);
//   - the label column's value, without a trailing "." (adult.test writes
//     "<=50K."), is looked up in label_vocabulary: its index is the class.
// A row that does not parse stops the read with an error naming the file,
// the line and the column. Stateless functions: thread-safe.
#ifndef PSTRAIN_DATA_CSV_DATASET_H_
#define PSTRAIN_DATA_CSV_DATASET_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "data/tabular_dataset.h"
#include "proto/feature_columns.pb.h"

namespace pstrain {
namespace data {

struct CsvOptions {
  std::vector<TableColumn> columns;  // every column of the file, in order
  std::string label_column;          // one of them
  std::vector<std::string> label_vocabulary;
};

// The options a model spec's CSV input states.
CsvOptions CsvOptionsOf(const proto::CsvInputSpec& spec);

// InvalidArgument for options that do not hold together (no columns, two of
// one name, a label column that is not one of them or is numeric, an empty
// label vocabulary). NotFound for a missing file; InvalidArgument as
// "FILE:LINE: column NAME: problem" for a row with another number of values,
// a numeric value that is not a number, or a label outside the vocabulary;
// InvalidArgument for a file without rows.
StatusOr<TabularDataset> ReadCsvFile(const std::string& path, const CsvOptions& options);

}  // namespace data
}  // namespace pstrain

#endif  // PSTRAIN_DATA_CSV_DATASET_H_
