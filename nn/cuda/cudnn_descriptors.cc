#include "nn/cuda/cudnn_descriptors.h"

#include <limits>
#include <string>

namespace pstrain {
namespace nn {
namespace cuda {

Status SetNhwc(TensorDescriptor* d, int64_t n, int64_t h, int64_t w, int64_t c) {
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  if (n > kMax || h > kMax || w > kMax || c > kMax || n * h * w * c > kMax) {
    return InvalidArgument("cudnn: a tensor of " + std::to_string(n) + "x" + std::to_string(h) +
                           "x" + std::to_string(w) + "x" + std::to_string(c) +
                           " is too large for cuDNN");
  }
  PS_ASSIGN_OR_RETURN(cudnnTensorDescriptor_t t, d->Get());
  PS_CUDNN(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NHWC, CUDNN_DATA_FLOAT, static_cast<int>(n),
                                      static_cast<int>(c), static_cast<int>(h),
                                      static_cast<int>(w)));
  return OkStatus();
}

Status SetNhwc(TensorDescriptor* d, const Shape& shape) {
  if (shape.size() == 4) return SetNhwc(d, shape[0], shape[1], shape[2], shape[3]);
  if (shape.size() == 2) return SetNhwc(d, shape[0], 1, 1, shape[1]);
  return InvalidArgument("cudnn: shape " + ShapeString(shape) + " is neither NHWC nor [N, C]");
}

}  // namespace cuda
}  // namespace nn
}  // namespace pstrain
