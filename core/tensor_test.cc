#include "core/tensor.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace pstrain {
namespace {

TEST(Tensor, ZeroFilledAlignedAndSized) {
  Tensor t({5, 5, 1, 32});
  EXPECT_EQ(t.size(), 800);
  EXPECT_EQ(t.bytes(), 3200u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % 64, 0u);
  for (int64_t i = 0; i < t.size(); ++i) ASSERT_EQ(t[i], 0.0f);
  EXPECT_EQ(ShapeString(t.shape()), "[5,5,1,32]");
}

TEST(Tensor, CopyIsDeep) {
  Tensor a({2, 2}, {1, 2, 3, 4});
  Tensor b = a;
  b[0] = 9;
  EXPECT_EQ(a[0], 1);
  a = b;
  EXPECT_EQ(a[0], 9);
  EXPECT_NE(a.data(), b.data());
}

TEST(Tensor, ReshapeKeepsData) {
  Tensor a({2, 3}, {1, 2, 3, 4, 5, 6});
  a.Reshape({3, 2});
  EXPECT_EQ(a.dim(0), 3);
  EXPECT_EQ(a[5], 6);
}

}  // namespace
}  // namespace pstrain
