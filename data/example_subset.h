// ExampleSubset: which examples of a split a task loads, so that a reader
// can keep only those as it reads: the first `limit` (--train_examples;
// every one when limit <= 0), and of those a worker's shard (the ones
// InputPipeline's shard walks, data/shard_order.h), in order.
#ifndef PSTRAIN_DATA_EXAMPLE_SUBSET_H_
#define PSTRAIN_DATA_EXAMPLE_SUBSET_H_

#include <algorithm>
#include <cstdint>

#include "data/shard_order.h"

namespace pstrain {
namespace data {

struct ExampleSubset {
  Shard shard;
  int64_t limit = 0;

  bool Keeps(int64_t i) const {
    return (limit <= 0 || i < limit) && i % shard.num_shards == shard.index;
  }
  // How many of a split of n examples are kept.
  int64_t KeptOf(int64_t n) const {
    const int64_t first = limit > 0 ? std::min(n, limit) : n;
    return first <= shard.index ? 0
                                : (first - shard.index + shard.num_shards - 1) / shard.num_shards;
  }
  // The index in the split of the k-th example kept.
  int64_t SplitIndex(int64_t k) const { return shard.index + k * shard.num_shards; }
};

}  // namespace data
}  // namespace pstrain

#endif  // PSTRAIN_DATA_EXAMPLE_SUBSET_H_
