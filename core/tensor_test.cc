#include "core/tensor.h"
#include "core/testing/status_assertions.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

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

TEST(Tensor, AViewSharesItsMemoryAndCopiesOfItOwnTheirs) {
  Tensor whole({4, 3});
  Tensor rows = Tensor::View({2, 3}, whole.data() + 3);  // rows 1 and 2
  EXPECT_FALSE(rows.owns_data());
  rows.Fill(7.0f);
  EXPECT_EQ(whole[2], 0.0f);
  EXPECT_EQ(whole[3], 7.0f);
  EXPECT_EQ(whole[8], 7.0f);
  EXPECT_EQ(whole[9], 0.0f);
  Tensor copy = rows;  // deep, owned
  EXPECT_TRUE(copy.owns_data());
  copy.Fill(1.0f);
  EXPECT_EQ(whole[3], 7.0f);
  rows = copy;  // assigned to: owns its memory from now on, writes nothing through
  EXPECT_TRUE(rows.owns_data());
  EXPECT_EQ(whole[3], 7.0f);
  EXPECT_EQ(rows[0], 1.0f);
}

// A view given an owner keeps it alive through moves, and lets it go with
// the last holder; a copy of it owns fresh memory and keeps nothing.
TEST(Tensor, AViewWithAnOwnerKeepsItAliveAsLongAsItLives) {
  auto memory = std::make_shared<std::vector<float>>(6, 0.0f);
  std::weak_ptr<std::vector<float>> watch = memory;
  Tensor view = Tensor::View({2, 3}, memory->data(), memory);
  memory.reset();
  EXPECT_FALSE(watch.expired());
  EXPECT_FALSE(view.owns_data());
  EXPECT_FALSE(view.borrows_data());
  EXPECT_TRUE(Tensor::View({1}, view.data()).borrows_data());
  view.Fill(2.0f);
  Tensor copy = view;
  EXPECT_TRUE(copy.owns_data());
  Tensor moved = std::move(view);
  EXPECT_EQ(moved[5], 2.0f);
  moved = Tensor();
  EXPECT_TRUE(watch.expired());
  EXPECT_EQ(copy[5], 2.0f);
}

}  // namespace
}  // namespace pstrain

namespace pstrain {
namespace {

TEST(CheckedNumElements, CountsValidShapes) {
  EXPECT_EQ(*CheckedNumElements({}), 1);
  EXPECT_EQ(*CheckedNumElements({5, 5, 1, 32}), 800);
  EXPECT_EQ(*CheckedNumElements({0, int64_t{1} << 62}), 0);
}

TEST(CheckedNumElements, RefusesOverflowAndNegativeDimensions) {
  // Each dimension is modest; their product wraps 64 bits (to 0 here).
  const int64_t d = int64_t{1} << 32;
  for (const Shape& bad :
       {Shape{d, d}, Shape{d, d, 4}, Shape{int64_t{1} << 62}, Shape{3, -1}, Shape{-2, -2}}) {
    auto n = CheckedNumElements(bad);
    EXPECT_EQ(n.status().code(), Code::kInvalidArgument) << ShapeString(bad);
    EXPECT_NE(n.status().message().find(ShapeString(bad)), std::string::npos);
  }
  // The largest count whose float32 bytes still fit.
  const int64_t max = std::numeric_limits<int64_t>::max() / 4;
  EXPECT_EQ(*CheckedNumElements({max}), max);
  PS_EXPECT_CODE(CheckedNumElements({max + 1}), Code::kInvalidArgument);
}

}  // namespace
}  // namespace pstrain
