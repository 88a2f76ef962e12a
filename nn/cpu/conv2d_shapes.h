// The shape rules that every conv2d kernel of the CPU backend checks, in one
// place, so that the oneDNN and the Winograd kernels refuse the same inputs
// with the same words.
#ifndef PSTRAIN_NN_CPU_CONV2D_SHAPES_H_
#define PSTRAIN_NN_CPU_CONV2D_SHAPES_H_

#include "core/status.h"
#include "core/tensor.h"
#include "nn/kernels.h"

namespace pstrain {
namespace nn {
namespace cpu {

// [N,Ho,Wo,cout] for an input of shape [N,H,W,cin].
Shape Conv2DOutputShape(const Conv2DConfig& c, const Shape& x);

// InvalidArgument unless x is [N,H,W,cin], w is [kh,kw,cin,cout] and the
// output has at least one pixel; b (when not null) must be [cout] and dy
// (when not null) the output's shape.
Status CheckConv2DOperands(const Conv2DConfig& c, const Tensor& x, const Tensor& w,
                           const Tensor* b, const Tensor* dy);

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_CPU_CONV2D_SHAPES_H_
