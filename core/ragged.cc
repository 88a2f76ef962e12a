#include "core/ragged.h"

namespace pstrain {

void RaggedIds::Add(const std::vector<int64_t>& ids, const std::vector<float>& id_weights) {
  values.insert(values.end(), ids.begin(), ids.end());
  weights.insert(weights.end(), id_weights.begin(), id_weights.end());
  row_splits.push_back(static_cast<int64_t>(values.size()));
}

Status RaggedIds::Check(const std::string& what) const {
  if (row_splits.empty() || row_splits.front() != 0) {
    return InvalidArgument(what + ": row_splits must start at 0");
  }
  for (size_t b = 1; b < row_splits.size(); ++b) {
    if (row_splits[b] < row_splits[b - 1]) {
      return InvalidArgument(what + ": row_splits decrease at example " + std::to_string(b - 1));
    }
  }
  if (row_splits.back() != static_cast<int64_t>(values.size())) {
    return InvalidArgument(what + ": row_splits end at " + std::to_string(row_splits.back()) +
                           ", but there are " + std::to_string(values.size()) + " ids");
  }
  if (!weights.empty() && weights.size() != values.size()) {
    return InvalidArgument(what + ": " + std::to_string(weights.size()) + " weights for " +
                           std::to_string(values.size()) + " ids");
  }
  return OkStatus();
}

}  // namespace pstrain
