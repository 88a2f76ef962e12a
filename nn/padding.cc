#include "nn/padding.h"

#include <algorithm>

namespace pstrain {
namespace nn {

WindowDim ComputeWindow(int64_t in, int64_t kernel, int64_t stride, Padding padding) {
  if (padding == Padding::kValid) {
    int64_t out = in >= kernel ? (in - kernel) / stride + 1 : 0;
    return {out, 0, 0};
  }
  int64_t out = (in + stride - 1) / stride;
  int64_t total = std::max<int64_t>((out - 1) * stride + kernel - in, 0);
  return {out, total / 2, total - total / 2};
}

WindowSpan CoveredCells(int64_t o, const WindowDim& d, int64_t kernel, int64_t stride, int64_t in) {
  const int64_t start = o * stride - d.pad_before;
  return {start, std::max<int64_t>(start, 0), std::min(start + kernel, in)};
}

}  // namespace nn
}  // namespace pstrain
