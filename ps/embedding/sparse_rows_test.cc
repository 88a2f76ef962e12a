#include "ps/embedding/sparse_rows.h"
#include "core/testing/status_assertions.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace pstrain {
namespace {

TEST(SparseRows, UniqueKeepsTheFirstSeenOrderAndWhereEachWent) {
  const std::vector<int64_t> batch = {5, 9, 5, -1, 9, 5};
  const UniqueKeys u = Unique(batch.data(), static_cast<int64_t>(batch.size()));
  EXPECT_EQ(u.keys, (std::vector<int64_t>{5, 9, -1}));
  EXPECT_EQ(u.position, (std::vector<int32_t>{0, 1, 0, 2, 1, 0}));
}

// Steps of different sizes through one kept index and output: each gives
// what a fresh Unique gives, with nothing of the step before left over.
TEST(SparseRows, UniqueIntoKeptBuffersGivesWhatAFreshOneGivesAtEveryStep) {
  KeyIndex seen;
  UniqueKeys kept;
  std::mt19937_64 rng(5);
  for (int64_t n : {20000, 30, 0, 5000, 70000, 1}) {
    std::vector<int64_t> batch(n);
    for (int64_t& k : batch) k = static_cast<int64_t>(rng() % 9000) - 100;
    Unique(batch.data(), n, &seen, &kept);
    const UniqueKeys fresh = Unique(batch.data(), n);
    EXPECT_EQ(kept.keys, fresh.keys) << n;
    EXPECT_EQ(kept.position, fresh.position) << n;
    EXPECT_EQ(seen.size(), static_cast<int64_t>(fresh.keys.size())) << n;
  }
}

// A kept index grown by one large step does not stay large: the small
// steps after it would each sweep it whole.
TEST(SparseRows, AKeptIndexGrownByALargeStepShrinksForSmallOnes) {
  KeyIndex seen;
  UniqueKeys kept;
  std::vector<int64_t> large(200000);
  for (size_t i = 0; i < large.size(); ++i) large[i] = static_cast<int64_t>(i) * 31;
  Unique(large.data(), static_cast<int64_t>(large.size()), &seen, &kept);
  const uint64_t grown = seen.capacity();
  ASSERT_GE(grown, large.size());
  const std::vector<int64_t> small = {4, 9, 4};
  Unique(small.data(), 3, &seen, &kept);
  EXPECT_EQ(kept.keys, (std::vector<int64_t>{4, 9}));
  EXPECT_EQ(kept.position, (std::vector<int32_t>{0, 1, 0}));
  EXPECT_LT(seen.capacity(), grown / 8);
}

TEST(SparseRows, SumDuplicatesAddsTheRowsOfRepeatedKeys) {
  const std::vector<int64_t> keys = {3, 1, 3, 3};
  const std::vector<float> rows = {1, 2, 10, 20, 100, 200, 1000, 2000};
  const SparseRows sum = SumDuplicates(keys.data(), 4, rows.data(), 2);
  EXPECT_EQ(sum.keys, (std::vector<int64_t>{3, 1}));
  ASSERT_EQ(sum.rows.shape(), (Shape{2, 2}));
  EXPECT_EQ(sum.rows[0], 1101);
  EXPECT_EQ(sum.rows[1], 2202);
  EXPECT_EQ(sum.rows[2], 10);
  EXPECT_EQ(sum.rows[3], 20);
}

TEST(SparseRows, KeysRoundTripAndAPartialKeyIsRefused) {
  const std::vector<int64_t> keys = {0, -5, int64_t{1} << 40};
  auto decoded = DecodeKeys(EncodeKeys(keys), "t");
  PS_ASSERT_OK(decoded);
  EXPECT_EQ(*decoded, keys);
  auto bad = DecodeKeys(std::string(12, 'x'), "table users");
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("table users: 12 bytes"), std::string::npos);
}

}  // namespace
}  // namespace pstrain
