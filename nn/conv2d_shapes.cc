#include "nn/conv2d_shapes.h"

#include <string>

#include "nn/padding.h"

namespace pstrain {
namespace nn {

Shape Conv2DOutputShape(const Conv2DConfig& c, const Shape& x) {
  WindowDim h = ComputeWindow(x[1], c.kernel_h, c.stride, c.padding);
  WindowDim w = ComputeWindow(x[2], c.kernel_w, c.stride, c.padding);
  return {x[0], h.out, w.out, c.out_channels};
}

Status CheckConv2DOperands(const Conv2DConfig& c, const Tensor& x, const Tensor& w, const Tensor* b,
                           const Tensor* dy) {
  if (x.rank() != 4 || x.dim(3) != c.in_channels) {
    return InvalidArgument("conv2d: input " + ShapeString(x.shape()) + " is not [N,H,W," +
                           std::to_string(c.in_channels) + "]");
  }
  Shape want_w = {c.kernel_h, c.kernel_w, c.in_channels, c.out_channels};
  if (w.shape() != want_w) {
    return InvalidArgument("conv2d: weights " + ShapeString(w.shape()) + ", want " +
                           ShapeString(want_w));
  }
  Shape y = Conv2DOutputShape(c, x.shape());
  if (y[1] <= 0 || y[2] <= 0) {
    return InvalidArgument("conv2d: input " + ShapeString(x.shape()) + " smaller than the kernel");
  }
  if (b != nullptr && b->shape() != Shape{c.out_channels}) {
    return InvalidArgument("conv2d: bias " + ShapeString(b->shape()) + ", want " +
                           ShapeString({c.out_channels}));
  }
  if (dy != nullptr && dy->shape() != y) {
    return InvalidArgument("conv2d: output gradient " + ShapeString(dy->shape()) + ", want " +
                           ShapeString(y));
  }
  return OkStatus();
}

}  // namespace nn
}  // namespace pstrain
