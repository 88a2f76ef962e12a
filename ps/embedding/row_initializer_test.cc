#include "ps/embedding/row_initializer.h"

#include <gtest/gtest.h>

#include <algorithm>
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

TEST(RowInitializer, UniformFillsTheRangeEvenlyAsFastTextsInputMatrix) {
  // fastText starts its input matrix uniform in [-1/dim, 1/dim].
  const float limit = 1.0f / 10;
  const RowInitializer init = RowInitializer::Uniform("words/embedding_weights", 3, 10, limit);
  std::vector<int64_t> deciles(10, 0);
  double sum = 0, sum_sq = 0;
  int64_t n = 0;
  for (int64_t key = 0; key < 20000; ++key) {
    for (float v : Row(init, key)) {
      ASSERT_LE(std::fabs(v), limit);
      ++deciles[std::min<int64_t>(9, static_cast<int64_t>((v + limit) / (2 * limit) * 10))];
      sum += v;
      sum_sq += double{v} * v;
      ++n;
    }
  }
  for (int64_t count : deciles) EXPECT_NEAR(static_cast<double>(count) / n, 0.1, 0.005);
  EXPECT_NEAR(sum / n, 0, 0.001);
  EXPECT_NEAR(std::sqrt(sum_sq / n), limit / std::sqrt(3.0), 0.001);  // a uniform's sd
  EXPECT_EQ(Row(init, 5), Row(RowInitializer::Uniform("words/embedding_weights", 3, 10, limit), 5));
}

TEST(RowInitializer, OfATableConfigTakesItsUniformOrItsNormal) {
  proto::EmbeddingTableConfig config;
  config.set_name("t");
  config.set_dim(4);
  config.set_initializer_uniform(0.5f);
  EXPECT_EQ(Row(RowInitializer::Of(config), 1), Row(RowInitializer::Uniform("t", 0, 4, 0.5f), 1));
  config.clear_initializer_uniform();
  EXPECT_EQ(Row(RowInitializer::Of(config), 1),
            Row(RowInitializer("t", 0, 4, DefaultEmbeddingStddev(4)), 1));
  config.set_initializer_stddev(0);
  EXPECT_EQ(Row(RowInitializer::Of(config), 1), std::vector<float>(4, 0.0f));
}

TEST(RowInitializer, StddevZeroStartsAtZero) {
  const RowInitializer init("linear/weights", 1, 3, 0.0f);
  EXPECT_EQ(Row(init, 99), std::vector<float>(3, 0.0f));
}

}  // namespace
}  // namespace pstrain
