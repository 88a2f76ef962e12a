// TensorFlow's SAME and VALID window arithmetic for conv and pooling.
#ifndef PSTRAIN_NN_PADDING_H_
#define PSTRAIN_NN_PADDING_H_

#include <cstdint>

namespace pstrain {
namespace nn {

enum class Padding { kSame, kValid };

// One spatial dimension of a windowed op.
struct WindowDim {
  int64_t out;         // output size
  int64_t pad_before;  // cells of padding before the input
  int64_t pad_after;   // and after it
};

// SAME: out = ceil(in / stride), the total padding split with the smaller
// half before. VALID: out = ceil((in - kernel + 1) / stride), no padding
// (out is 0 when the kernel is larger than the input).
WindowDim ComputeWindow(int64_t in, int64_t kernel, int64_t stride, Padding padding);

// The input cells [begin, end) that output `o` of a windowed dimension
// covers, padding left out; `start` is where its window begins (negative
// where it begins in the padding before the input).
struct WindowSpan {
  int64_t start, begin, end;
};
WindowSpan CoveredCells(int64_t o, const WindowDim& d, int64_t kernel, int64_t stride, int64_t in);

}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_PADDING_H_
