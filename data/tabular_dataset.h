// TabularDataset: labelled rows held column by column, as feature columns
// (data/feature_columns.h) read them: a numeric column holds one float per
// row; a string column one string per row (CSV, data/csv_dataset.h) or any
// number of them (a variable-length feature of tf.train.Examples,
// data/example_rows.h).
#ifndef PSTRAIN_DATA_TABULAR_DATASET_H_
#define PSTRAIN_DATA_TABULAR_DATASET_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace pstrain {
namespace data {

struct TableColumn {
  std::string name;
  bool numeric = false;
};

// The label is not among the columns.
struct TabularDataset {
  std::vector<TableColumn> columns;
  std::vector<std::vector<float>> numbers;        // per numeric column: one per row
  std::vector<std::vector<std::string>> strings;  // per string column: its values, row by row
  // Per string column: empty (or absent) when each row holds one string;
  // else count + 1 offsets, row r's strings being [splits[r], splits[r + 1]).
  std::vector<std::vector<int64_t>> string_splits;
  std::vector<int32_t> labels;
  int64_t count = 0;

  // The index of a column among `columns`, or -1.
  int ColumnIndex(const std::string& name) const;
  // Row `row`'s values of string column `column`: [first, second).
  std::pair<const std::string*, const std::string*> Strings(int column, int64_t row) const;
};

}  // namespace data
}  // namespace pstrain

#endif  // PSTRAIN_DATA_TABULAR_DATASET_H_
