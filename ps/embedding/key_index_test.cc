#include "ps/embedding/key_index.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <unordered_map>
#include <vector>

#include "cluster/key_partition.h"

namespace pstrain {
namespace {

TEST(KeyIndex, MatchesAMapThroughInsertsAndErasures) {
  KeyIndex index;
  std::unordered_map<int64_t, uint32_t> expected;
  std::mt19937_64 rng(7);
  std::vector<int64_t> keys = {0, -1, std::numeric_limits<int64_t>::min(),
                               std::numeric_limits<int64_t>::max()};
  for (int i = 0; i < 20000; ++i) keys.push_back(static_cast<int64_t>(rng()) >> (i % 50));
  for (int64_t key : keys) {
    if (expected.count(key)) continue;
    const auto value = static_cast<uint32_t>(expected.size());
    index.Insert(key, value);
    expected[key] = value;
  }
  ASSERT_EQ(index.size(), static_cast<int64_t>(expected.size()));
  // Erase every other key, then check every key, present or not.
  int n = 0;
  for (auto it = expected.begin(); it != expected.end();) {
    if (n++ % 2 == 0) {
      EXPECT_TRUE(index.Erase(it->first));
      EXPECT_FALSE(index.Erase(it->first));
      it = expected.erase(it);
    } else {
      ++it;
    }
  }
  for (int64_t key : keys) {
    auto it = expected.find(key);
    EXPECT_EQ(index.Find(key), it == expected.end() ? KeyIndex::kAbsent : it->second) << key;
  }
  int64_t visited = 0;
  index.ForEach([&](int64_t key, uint32_t value) {
    ++visited;
    EXPECT_EQ(expected.at(key), value);
  });
  EXPECT_EQ(visited, static_cast<int64_t>(expected.size()));
  // Change in place.
  const int64_t some = expected.begin()->first;
  *index.FindMutable(some) = 12345;
  EXPECT_EQ(index.Find(some), 12345u);
  EXPECT_EQ(index.FindMutable(-424242424242), nullptr);
}

TEST(KeyIndex, FindOrInsertAddsOnlyWhatIsAbsentAndGrowsAsInsertDoes) {
  // From an empty index (no capacity yet) through growth: each first
  // sighting is added with its value, each later one finds the first's.
  KeyIndex index;
  std::unordered_map<int64_t, uint32_t> expected;
  std::mt19937_64 rng(11);
  for (int i = 0; i < 50000; ++i) {
    const int64_t key = static_cast<int64_t>(rng() % 20000) - 10000;
    const auto value = static_cast<uint32_t>(i);
    if (i % 7 == 0) index.Prefetch(key);  // harmless once there is a capacity
    const uint32_t found = index.FindOrInsert(key, value);
    auto [it, added] = expected.emplace(key, value);
    EXPECT_EQ(found, added ? KeyIndex::kAbsent : it->second) << key;
  }
  EXPECT_EQ(index.size(), static_cast<int64_t>(expected.size()));
  for (const auto& [key, value] : expected) EXPECT_EQ(index.Find(key), value) << key;
}

TEST(KeyIndex, ErasingAlongWrappedRunsKeepsEveryKeyReachable) {
  // Many erasures at high load: backward shifting must not cut a run.
  KeyIndex index;
  std::vector<int64_t> keys;
  for (int64_t k = 0; k < 11; ++k) {
    keys.push_back(k * 1000003);
    index.Insert(keys.back(), static_cast<uint32_t>(k));
  }
  for (int round = 0; round < 200; ++round) {
    const int64_t gone = keys[round % keys.size()];
    ASSERT_TRUE(index.Erase(gone));
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] != gone) {
        ASSERT_NE(index.Find(keys[i]), KeyIndex::kAbsent) << round;
      }
    }
    index.Insert(gone, 7);
  }
}

TEST(KeyIndex, OneShardsKeysCostAtMost26BytesEach) {
  // The keys of shard 0 of 8 share the top bits of SplitMix64(key): they
  // must still spread over the whole index.
  KeyIndex index;
  int64_t inserted = 0;
  uint64_t most_per_key = 0;
  for (int64_t key = 0; inserted < 200000; ++key) {
    if (KeyShard(key, 8) != 0) continue;
    index.Insert(key, static_cast<uint32_t>(inserted++));
    if (inserted > 1000) most_per_key = std::max<uint64_t>(most_per_key, index.bytes() / inserted);
  }
  EXPECT_LE(most_per_key, 26u);
  EXPECT_LE(static_cast<double>(index.size()), KeyIndex::kMaxLoad * index.capacity());
}

TEST(KeyIndex, BytesToInsertCountsTheGrowthAndTheMove) {
  KeyIndex index;
  index.Insert(1, 1);
  const uint64_t now = index.bytes();
  EXPECT_EQ(index.BytesToInsert(1), now);  // room for one more
  const uint64_t grown = index.BytesToInsert(1000);
  EXPECT_GT(grown, now + 1000 * KeyIndex::kBytesPerEntry);
  for (int64_t k = 2; k < 1002; ++k) index.Insert(k, 0);
  EXPECT_LE(index.bytes(), grown);
  EXPECT_GE(index.bytes(), 1001 * KeyIndex::kBytesPerEntry);
}

}  // namespace
}  // namespace pstrain
