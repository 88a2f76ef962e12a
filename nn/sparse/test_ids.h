// For tests of models of ids: a batch's ids as a worker hands them to its
// model, each id with its place among the batch's unique ids.
#ifndef PSTRAIN_NN_SPARSE_TEST_IDS_H_
#define PSTRAIN_NN_SPARSE_TEST_IDS_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/ragged.h"

namespace pstrain {
namespace nn {

struct TestIds {
  RaggedIds ids;
  std::vector<int64_t> keys;      // the unique ids, in order first seen
  std::vector<int32_t> position;  // per id: its key's place in `keys`
  // Appends one example's ids (and weights, when the batch has them).
  void Add(const std::vector<int64_t>& example, const std::vector<float>& weights = {}) {
    ids.Add(example, weights);
    for (int64_t id : example) {
      auto at = std::find(keys.begin(), keys.end(), id);
      if (at == keys.end()) at = keys.insert(keys.end(), id);
      position.push_back(static_cast<int32_t>(at - keys.begin()));
    }
  }
};

}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_SPARSE_TEST_IDS_H_
