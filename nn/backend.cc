// The host-memory defaults of Backend's memory operations: the CPU backend's.
#include "nn/backend.h"

#include <cstring>

namespace pstrain {
namespace nn {

Status Backend::CopyAs(const Tensor& x, const Shape& shape, Tensor* y) {
  if (NumElements(shape) != x.size()) {
    return InvalidArgument("copy of " + ShapeString(x.shape()) + " as " + ShapeString(shape));
  }
  if (y->shape() != shape || y->device() != nullptr) *y = Tensor(shape, Tensor::kUninitialized);
  if (x.size() > 0) std::memcpy(y->data(), x.data(), x.bytes());
  return OkStatus();
}

Status Backend::Upload(const Tensor& host, Tensor* device) {
  return CopyAs(host, host.shape(), device);
}

Status Backend::Download(const Tensor& device, Tensor* host) {
  return CopyAs(device, device.shape(), host);
}

StatusOr<Tensor> Backend::Zeros(const Shape& shape) { return Tensor(shape); }

}  // namespace nn
}  // namespace pstrain
