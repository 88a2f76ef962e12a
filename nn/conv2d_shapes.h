// The shape rules that every conv2d kernel checks (the CPU backend's oneDNN
// and Winograd kernels, the CUDA backend's), in one place, so that every
// backend refuses the same inputs with the same words.
#ifndef PSTRAIN_NN_CONV2D_SHAPES_H_
#define PSTRAIN_NN_CONV2D_SHAPES_H_

#include "core/status.h"
#include "core/tensor.h"
#include "nn/kernels.h"

namespace pstrain {
namespace nn {

// [N,Ho,Wo,cout] for an input of shape [N,H,W,cin].
Shape Conv2DOutputShape(const Conv2DConfig& c, const Shape& x);

// InvalidArgument unless x is [N,H,W,cin], w is [kh,kw,cin,cout] and the
// output has at least one pixel; b (when not null) must be [cout] and dy
// (when not null) the output's shape.
Status CheckConv2DOperands(const Conv2DConfig& c, const Tensor& x, const Tensor& w, const Tensor* b,
                           const Tensor* dy);

}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_CONV2D_SHAPES_H_
