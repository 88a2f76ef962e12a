#include "data/shard_order.h"

#include <utility>

namespace pstrain {
namespace data {
namespace {

// The RNG of one epoch of one shard: distinct streams for every
// (seed, shard, epoch), decorrelated by odd multipliers.
std::mt19937_64 EpochRng(uint64_t seed, int shard_index, int64_t epoch) {
  return std::mt19937_64(seed ^ (static_cast<uint64_t>(shard_index) * 0x9e3779b97f4a7c15ull) ^
                         (static_cast<uint64_t>(epoch + 1) * 0xbf58476d1ce4e5b9ull));
}

}  // namespace

std::string Shard::ToString() const {
  return "shard " + std::to_string(index) + " of " + std::to_string(num_shards);
}

Status CheckShard(const Shard& shard) {
  if (shard.num_shards >= 1 && shard.index >= 0 && shard.index < shard.num_shards) {
    return OkStatus();
  }
  return InvalidArgument(shard.ToString() + " is not one: its index must be in 0.." +
                         std::to_string(shard.num_shards - 1));
}

std::vector<int64_t> ShardIndices(int64_t count, const Shard& shard) {
  std::vector<int64_t> indices;
  for (int64_t i = shard.index; i < count; i += shard.num_shards) indices.push_back(i);
  return indices;
}

uint64_t UniformBelow(std::mt19937_64* rng, uint64_t n) {
  const uint64_t limit = -n % n;  // 2^64 mod n: values below it are rejected
  uint64_t x;
  do {
    x = (*rng)();
  } while (x < limit);
  return x % n;
}

std::vector<int64_t> EpochOrder(const std::vector<int64_t>& shard, uint64_t seed, int shard_index,
                                int64_t epoch) {
  std::vector<int64_t> order = shard;
  std::mt19937_64 rng = EpochRng(seed, shard_index, epoch);
  for (size_t i = order.size(); i > 1; --i) {
    std::swap(order[i - 1], order[UniformBelow(&rng, i)]);
  }
  return order;
}

uint64_t StreamSeed(uint64_t seed, uint64_t stream) {
  // SplitMix64's finalizer over (seed, stream): every bit of both reaches the
  // result, so nearby seeds and streams do not give related generators.
  uint64_t z = seed + (stream + 1) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace data
}  // namespace pstrain
