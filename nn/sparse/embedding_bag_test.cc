#include "nn/sparse/embedding_bag.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "core/testing/status_assertions.h"
#include "nn/grad_check.h"

namespace pstrain {
namespace nn {
namespace {

constexpr int64_t kDim = 5;

// Four examples: repeated ids within and across them, an empty one, and
// weights, as a batch of ragged ids looks.
RaggedIds Batch(bool weighted) {
  RaggedIds ids;
  ids.Add({7, 3, 7}, weighted ? std::vector<float>{0.5f, 2.0f, 1.5f} : std::vector<float>{});
  ids.Add({}, {});
  ids.Add({3}, weighted ? std::vector<float>{-1.0f} : std::vector<float>{});
  ids.Add({11, 12, 3, 11},
          weighted ? std::vector<float>{1.0f, 0.25f, 3.0f, 2.0f} : std::vector<float>{});
  return ids;
}

// The bag by its definition, one example at a time, from a dense table of
// every id.
std::vector<float> Reference(const RaggedIds& ids, const std::vector<int64_t>& unique,
                             const Tensor& rows, Combiner combiner) {
  std::vector<float> out(ids.batch() * kDim, 0.0f);
  for (int64_t b = 0; b < ids.batch(); ++b) {
    double norm = 0;
    for (int64_t j = ids.row_splits[b]; j < ids.row_splits[b + 1]; ++j) {
      const double w = ids.weights.empty() ? 1 : ids.weights[j];
      norm += combiner == Combiner::kMean ? w : w * w;
    }
    const double scale = combiner == Combiner::kSum    ? 1.0
                         : norm == 0                   ? 0.0
                         : combiner == Combiner::kMean ? 1 / norm
                                                       : 1 / std::sqrt(norm);
    for (int64_t j = ids.row_splits[b]; j < ids.row_splits[b + 1]; ++j) {
      const double w = ids.weights.empty() ? 1 : ids.weights[j];
      const int64_t at = std::find(unique.begin(), unique.end(), ids.values[j]) - unique.begin();
      for (int64_t d = 0; d < kDim; ++d) out[b * kDim + d] += w * scale * rows[at * kDim + d];
    }
  }
  return out;
}

// The ids without repeats, in the order first seen, and each id's place
// among them.
struct Places {
  std::vector<int64_t> keys;
  std::vector<int32_t> position;
};
Places UniqueIds(const RaggedIds& ids) {
  Places p;
  for (int64_t id : ids.values) {
    auto at = std::find(p.keys.begin(), p.keys.end(), id);
    if (at == p.keys.end()) at = p.keys.insert(p.keys.end(), id);
    p.position.push_back(static_cast<int32_t>(at - p.keys.begin()));
  }
  return p;
}

class EmbeddingBagTest : public ::testing::TestWithParam<std::tuple<Combiner, bool /*weighted*/>> {
};

TEST_P(EmbeddingBagTest, ForwardIsTheDefinitionAndBackwardItsGradient) {
  const auto [combiner, weighted] = GetParam();
  const RaggedIds ids = Batch(weighted);
  const Places unique = UniqueIds(ids);
  ASSERT_EQ(unique.keys, (std::vector<int64_t>{7, 3, 11, 12}));
  const BagIds bag{&ids, &unique.position};
  std::mt19937 rng(9);
  Tensor rows = RandomTensor({4, kDim}, &rng);
  Tensor out;
  PS_ASSERT_OK(EmbeddingBagForward(bag, rows, combiner, &out));
  ASSERT_EQ(out.shape(), (Shape{4, kDim}));
  const std::vector<float> expected = Reference(ids, unique.keys, rows, combiner);
  for (int64_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], expected[i], 1e-6) << i;
  for (int64_t d = 0; d < kDim; ++d) EXPECT_EQ(out[kDim + d], 0.0f) << "an empty bag";

  // Loss = sum(out * r): the rows' gradient against central differences.
  const Tensor r = RandomTensor({4, kDim}, &rng);
  Tensor drows;
  PS_ASSERT_OK(EmbeddingBagBackward(bag, 4, r, combiner, &drows));
  ASSERT_EQ(drows.shape(), (Shape{4, kDim}));
  GradCheckOptions options;
  options.atol = 1e-4;
  ExpectGradientMatches(
      "rows", &rows, drows,
      [&] {
        Tensor y;
        PS_EXPECT_OK(EmbeddingBagForward(bag, rows, combiner, &y));
        return Dot(y, r);
      },
      options);
}

INSTANTIATE_TEST_SUITE_P(EveryCombiner, EmbeddingBagTest,
                         ::testing::Combine(::testing::Values(Combiner::kSum, Combiner::kMean,
                                                              Combiner::kSqrtn),
                                            ::testing::Bool()));

TEST(EmbeddingBag, BadIdsAreRefused) {
  RaggedIds ids = Batch(false);
  std::vector<int32_t> position(ids.values.size(), 0);
  Tensor rows({1, kDim}), out;
  position[2] = 1;  // past the one row
  EXPECT_EQ(EmbeddingBagForward({&ids, &position}, rows, Combiner::kSum, &out).code(),
            Code::kInvalidArgument);
  position[2] = 0;
  ids.row_splits[2] = 100;
  EXPECT_EQ(EmbeddingBagForward({&ids, &position}, rows, Combiner::kSum, &out).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(CombinerFromName("max").status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace nn
}  // namespace pstrain
