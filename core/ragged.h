// RaggedIds: a batch's variable-length lists of int64 ids, as TensorFlow's
// RaggedTensor holds them (values and row_splits), each id with an
// optional weight: example b's ids are values[row_splits[b] ..
// row_splits[b + 1]).
#ifndef PSTRAIN_CORE_RAGGED_H_
#define PSTRAIN_CORE_RAGGED_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace pstrain {

struct RaggedIds {
  std::vector<int64_t> values;
  std::vector<int64_t> row_splits = {0};  // batch + 1 entries
  std::vector<float> weights;             // empty (every weight 1) or one per value

  int64_t batch() const { return static_cast<int64_t>(row_splits.size()) - 1; }
  // Appends one example's ids (and weights, when the batch has them).
  void Add(const std::vector<int64_t>& ids, const std::vector<float>& id_weights = {});
  // InvalidArgument, naming `what`, unless row_splits starts at 0, never
  // decreases and ends at values.size(), and weights are none or one per
  // value.
  Status Check(const std::string& what) const;
};

}  // namespace pstrain

#endif  // PSTRAIN_CORE_RAGGED_H_
