// Which ps task holds an embedding key's row: a hash of the key, never its
// range or arrival order, so that hot ids (small integers, popular items)
// spread evenly and every task computes the same owner with no one to ask.
#ifndef PSTRAIN_CLUSTER_KEY_PARTITION_H_
#define PSTRAIN_CLUSTER_KEY_PARTITION_H_

#include <cstdint>

#include "core/splitmix64.h"

namespace pstrain {

// The shard in [0, num_shards) of `key`; num_shards > 0.
inline int KeyShard(int64_t key, int num_shards) {
  return static_cast<int>(
      ReduceToRange(SplitMix64(static_cast<uint64_t>(key)), static_cast<uint64_t>(num_shards)));
}

}  // namespace pstrain

#endif  // PSTRAIN_CLUSTER_KEY_PARTITION_H_
