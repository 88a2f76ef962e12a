#include "nn/cpu/small_gemm.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace pstrain {
namespace nn {
namespace cpu {
namespace {

struct GemmCase {
  int64_t rows, cols, depth;
  bool transposed_a, accumulate;
};

// Full blocks (6 x 16 and 8 x 32), every partial row count, partial column blocks, a
// depth of zero and one, and A read transposed in place.
const GemmCase kCases[] = {
    {6, 16, 64, false, false}, {8, 32, 24, false, false}, {36, 64, 64, false, false},
    {64, 64, 36, true, true},  {5, 16, 7, false, false},  {4, 31, 9, true, false},
    {3, 9, 1, false, true},    {2, 3, 5, true, true},     {1, 17, 3, false, false},
    {15, 47, 11, true, true},  {7, 40, 0, false, true},
};

class SmallGemmTest : public ::testing::TestWithParam<std::tuple<GemmCase, GemmPath>> {
 protected:
  void SetUp() override {
    const GemmPath path = std::get<1>(GetParam());
    if (!SmallGemmSupports(path)) GTEST_SKIP() << "this CPU cannot run " << GemmPathName(path);
  }
};

TEST_P(SmallGemmTest, MatchesTheDefinition) {
  const GemmCase& k = std::get<0>(GetParam());
  const GemmPath path = std::get<1>(GetParam());
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1, 1);
  // Leading dimensions wider than the operands, so a kernel that ignores
  // them reads the wrong elements.
  const int64_t lda = k.depth + 3, ldb = k.cols + 5, ldc = k.cols + 2;
  std::vector<float> a(std::max<int64_t>(k.rows, k.depth) * lda + lda), b(k.depth * ldb + 1);
  std::vector<float> c(k.rows * ldc);
  for (float& f : a) f = u(rng);
  for (float& f : b) f = u(rng);
  for (float& f : c) f = u(rng);
  const std::vector<float> c0 = c;
  // Transposed: element (i, q) at a[q * lda + i].
  GemmOperands g{k.rows,
                 k.cols,
                 k.depth,
                 a.data(),
                 k.transposed_a ? 1 : lda,
                 k.transposed_a ? lda : 1,
                 b.data(),
                 ldb,
                 c.data(),
                 ldc,
                 k.accumulate};
  SmallGemm(g, path);
  for (int64_t i = 0; i < k.rows; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      if (j >= k.cols) {
        EXPECT_EQ(c[i * ldc + j], c0[i * ldc + j]) << "wrote outside C at " << i << "," << j;
        continue;
      }
      double want = k.accumulate ? c0[i * ldc + j] : 0.0;
      for (int64_t q = 0; q < k.depth; ++q) {
        want += double{a[i * g.a_row_stride + q * g.a_col_stride]} * b[q * ldb + j];
      }
      EXPECT_NEAR(c[i * ldc + j], want, 1e-5 * (1 + k.depth)) << i << "," << j;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, SmallGemmTest,
                         ::testing::Combine(::testing::ValuesIn(kCases),
                                            ::testing::Values(GemmPath::kAvx512, GemmPath::kAvx2,
                                                              GemmPath::kPortable)));

}  // namespace
}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
