// A worker's shard of a split, the examples of it, and each epoch's order
// of them, as InputPipeline (data/input_pipeline.h) and FeatureBatchSource
// walk a shard.
//
// A shard holds the examples whose index i satisfies
// i % num_shards == index. Each epoch's order is a Fisher-Yates shuffle
// driven by std::mt19937_64 seeded from (seed, shard index, epoch) alone, with
// arithmetic of our own (not <random>'s distributions), so it is the same on
// every platform and run, and differs between epochs and shards. Stateless
// functions: thread-safe.
#ifndef PSTRAIN_DATA_SHARD_ORDER_H_
#define PSTRAIN_DATA_SHARD_ORDER_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/status.h"

namespace pstrain {
namespace data {

// Which shard: one value wherever a worker's shard is named (what a reader
// keeps, what a dataset holds, what a pipeline walks).
struct Shard {
  int index = 0;
  int num_shards = 1;

  bool whole() const { return num_shards == 1; }
  bool operator==(const Shard& o) const { return index == o.index && num_shards == o.num_shards; }
  bool operator!=(const Shard& o) const { return !(*this == o); }
  // "shard 1 of 3".
  std::string ToString() const;
};
// InvalidArgument, naming it, for a shard outside [0, num_shards).
Status CheckShard(const Shard& shard);

// The indices in [0, count) of `shard`, ascending.
std::vector<int64_t> ShardIndices(int64_t count, const Shard& shard);

// `shard` in the order of `epoch`: a Fisher-Yates shuffle by the RNG of
// (seed, shard_index, epoch).
std::vector<int64_t> EpochOrder(const std::vector<int64_t>& shard, uint64_t seed, int shard_index,
                                int64_t epoch);

// A uniform integer in [0, n), n > 0, without modulo bias.
uint64_t UniformBelow(std::mt19937_64* rng, uint64_t n);

// A seed for an RNG stream of its own: distinct `stream` values (odd
// multipliers decorrelate them) give unrelated generators for one seed.
uint64_t StreamSeed(uint64_t seed, uint64_t stream);

}  // namespace data
}  // namespace pstrain

#endif  // PSTRAIN_DATA_SHARD_ORDER_H_
