#include "ps/embedding/row_index.h"

#include <gtest/gtest.h>

#include <random>
#include <unordered_map>
#include <vector>

namespace pstrain {
namespace {

// Rows keep their keys: row r holds keys[r].
TEST(RowIndex, MatchesAMapThroughInsertsAndErasures) {
  std::vector<int64_t> keys;
  auto key_of = [&keys](uint32_t row) { return keys[row]; };
  RowIndex index;
  std::unordered_map<int64_t, uint32_t> expected;
  std::mt19937_64 rng(5);
  for (int i = 0; i < 30000; ++i) {
    const auto key = static_cast<int64_t>(rng()) >> (i % 60);
    if (expected.count(key)) continue;
    const auto row = static_cast<uint32_t>(keys.size());
    keys.push_back(key);
    index.Insert(key, row);
    expected[key] = row;
  }
  ASSERT_EQ(index.size(), static_cast<int64_t>(expected.size()));
  int n = 0;
  for (auto it = expected.begin(); it != expected.end();) {
    if (n++ % 3 == 0) {
      EXPECT_TRUE(index.Erase(it->first, key_of));
      EXPECT_FALSE(index.Erase(it->first, key_of));
      it = expected.erase(it);
    } else {
      ++it;
    }
  }
  for (int64_t key : keys) {
    auto it = expected.find(key);
    EXPECT_EQ(index.Find(key, key_of), it == expected.end() ? RowIndex::kAbsent : it->second);
  }
  EXPECT_EQ(index.Find(-99999999999, key_of), RowIndex::kAbsent);
}

// Keys whose hashes share their tag still find their own rows.
TEST(RowIndex, KeysOfOneTagAreToldApartByTheirRows) {
  std::vector<int64_t> keys;
  auto key_of = [&keys](uint32_t row) { return keys[row]; };
  RowIndex index;
  // A few thousand keys: some pairs share the 32-bit tag only by chance,
  // so force the comparison path by checking every key finds its row.
  for (int64_t k = 0; k < 5000; ++k) {
    keys.push_back(k * 0x100000001LL);
    index.Insert(keys.back(), static_cast<uint32_t>(k));
  }
  for (int64_t k = 0; k < 5000; ++k) ASSERT_EQ(index.Find(keys[k], key_of), k);
  EXPECT_LE(index.bytes() / index.size(), 18u);  // 8 bytes an entry, 0.466 used at worst
}

}  // namespace
}  // namespace pstrain
