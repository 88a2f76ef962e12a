#include "ps/embedding/row_initializer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace pstrain {
namespace {

std::vector<float> Row(const RowInitializer& init, int64_t key) {
  std::vector<float> row(init.dim());
  init.Fill(key, row.data());
  return row;
}

TEST(RowInitializer, ARowDependsOnTableSeedAndKeyOnly) {
  const RowInitializer a("users/embedding_weights", 1, 8, 0.25f);
  const RowInitializer again("users/embedding_weights", 1, 8, 0.25f);
  EXPECT_EQ(Row(a, 42), Row(again, 42));
  EXPECT_EQ(Row(a, -7), Row(again, -7));
  EXPECT_NE(Row(a, 42), Row(a, 43));
  EXPECT_NE(Row(a, 42), Row(RowInitializer("items/embedding_weights", 1, 8, 0.25f), 42));
  EXPECT_NE(Row(a, 42), Row(RowInitializer("users/embedding_weights", 2, 8, 0.25f), 42));
}

TEST(RowInitializer, IsANormalTruncatedAtTwoStddev) {
  const float stddev = DefaultEmbeddingStddev(16);
  EXPECT_FLOAT_EQ(stddev, 0.25f);
  const RowInitializer init("t", 3, 16, stddev);
  double sum = 0, sum_sq = 0;
  int64_t n = 0;
  for (int64_t key = 0; key < 20000; ++key) {
    for (float v : Row(init, key)) {
      ASSERT_LE(std::fabs(v), 2 * stddev);
      sum += v;
      sum_sq += double{v} * v;
      ++n;
    }
  }
  const double mean = sum / n;
  const double sd = std::sqrt(sum_sq / n - mean * mean);
  EXPECT_NEAR(mean, 0, 0.002);
  // A normal truncated at 2 sigma keeps 0.8796 of sigma.
  EXPECT_NEAR(sd / stddev, 0.8796, 0.005);
}

TEST(RowInitializer, StddevZeroStartsAtZero) {
  const RowInitializer init("linear/weights", 1, 3, 0.0f);
  EXPECT_EQ(Row(init, 99), std::vector<float>(3, 0.0f));
}

}  // namespace
}  // namespace pstrain
