// Naive reference implementations for tests: direct loops in double, with
// TensorFlow's padding rules written out independently of nn/padding.h.
#ifndef PSTRAIN_NN_REFERENCE_OPS_H_
#define PSTRAIN_NN_REFERENCE_OPS_H_

#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace pstrain {
namespace nn {

// x NHWC, w HWIO, b [cout]; same = TF SAME, else VALID.
Tensor ReferenceConv2D(const Tensor& x, const Tensor& w, const Tensor& b, int stride, bool same);
// Max over each window of x NHWC; padded cells are -inf.
Tensor ReferenceMaxPool(const Tensor& x, int window, int stride, bool same);
// x [N,in] (any shape with N rows), w [in,out], b [out].
Tensor ReferenceDense(const Tensor& x, const Tensor& w, const Tensor& b);
// max(x, 0) element-wise.
Tensor ReferenceRelu(const Tensor& x);
// Mean sparse softmax cross-entropy of logits [N, C], in double, so a
// numerical gradient is not limited by a float loss's rounding.
double ReferenceCrossEntropy(const Tensor& logits, const std::vector<int32_t>& labels);

}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_REFERENCE_OPS_H_
