// ExampleSubset: which examples of a split a task loads, so that a reader
// can keep only those as it reads: the first `limit` (--train_examples;
// every one when limit <= 0), and of those a worker's shard, the examples
// of index i with i % num_shards == shard_index (the ones InputPipeline's
// shard walks, data/shard_order.h), in order.
#ifndef PSTRAIN_DATA_EXAMPLE_SUBSET_H_
#define PSTRAIN_DATA_EXAMPLE_SUBSET_H_

#include <algorithm>
#include <cstdint>

namespace pstrain {
namespace data {

struct ExampleSubset {
  int shard_index = 0;
  int num_shards = 1;
  int64_t limit = 0;

  bool Keeps(int64_t i) const { return (limit <= 0 || i < limit) && i % num_shards == shard_index; }
  // How many of a split of n examples are kept.
  int64_t KeptOf(int64_t n) const {
    const int64_t first = limit > 0 ? std::min(n, limit) : n;
    return first <= shard_index ? 0 : (first - shard_index + num_shards - 1) / num_shards;
  }
  // The index in the split of the k-th example kept.
  int64_t SplitIndex(int64_t k) const { return shard_index + k * num_shards; }
};

}  // namespace data
}  // namespace pstrain

#endif  // PSTRAIN_DATA_EXAMPLE_SUBSET_H_
