#include "nn/padding.h"

#include <gtest/gtest.h>

namespace pstrain {
namespace nn {
namespace {

struct WindowCase {
  int64_t in, kernel, stride;
  Padding padding;
  WindowDim want;
};

// Values as TensorFlow computes them.
const WindowCase kCases[] = {
    {28, 5, 1, Padding::kSame, {28, 2, 2}},  {28, 2, 2, Padding::kSame, {14, 0, 0}},
    {7, 2, 2, Padding::kSame, {4, 0, 1}},    {8, 5, 2, Padding::kSame, {4, 1, 2}},
    {24, 3, 2, Padding::kSame, {12, 0, 1}},  {5, 1, 2, Padding::kSame, {3, 0, 0}},
    {28, 5, 1, Padding::kValid, {24, 0, 0}}, {7, 3, 2, Padding::kValid, {3, 0, 0}},
    {8, 3, 2, Padding::kValid, {3, 0, 0}},   {2, 3, 1, Padding::kValid, {0, 0, 0}},
};

TEST(ComputeWindow, MatchesTensorFlow) {
  for (const WindowCase& c : kCases) {
    WindowDim got = ComputeWindow(c.in, c.kernel, c.stride, c.padding);
    EXPECT_EQ(got.out, c.want.out) << c.in << " " << c.kernel << " " << c.stride;
    EXPECT_EQ(got.pad_before, c.want.pad_before) << c.in << " " << c.kernel << " " << c.stride;
    EXPECT_EQ(got.pad_after, c.want.pad_after) << c.in << " " << c.kernel << " " << c.stride;
  }
}

}  // namespace
}  // namespace nn
}  // namespace pstrain
