#include "data/tabular_dataset.h"

namespace pstrain {
namespace data {

int TabularDataset::ColumnIndex(const std::string& name) const {
  for (size_t c = 0; c < columns.size(); ++c) {
    if (columns[c].name == name) return static_cast<int>(c);
  }
  return -1;
}

std::pair<const std::string*, const std::string*> TabularDataset::Strings(int column,
                                                                          int64_t row) const {
  const std::string* all = strings[column].data();
  if (static_cast<size_t>(column) >= string_splits.size() || string_splits[column].empty()) {
    return {all + row, all + row + 1};
  }
  const std::vector<int64_t>& splits = string_splits[column];
  return {all + splits[row], all + splits[row + 1]};
}

}  // namespace data
}  // namespace pstrain
