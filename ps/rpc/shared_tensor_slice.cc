#include "ps/rpc/shared_tensor_slice.h"

#include <utility>

namespace pstrain {

namespace {

using TensorRef = std::shared_ptr<const Tensor>;

void DropReference(void* ref) { delete static_cast<TensorRef*>(ref); }

}  // namespace

grpc::Slice SharedTensorSlice(std::shared_ptr<const Tensor> tensor, const char* data, size_t size) {
  auto* ref = new TensorRef(std::move(tensor));
  // gRPC's slice type is not const, but it only reads a slice it sends.
  return grpc::Slice(const_cast<char*>(data), size, &DropReference, ref);
}

}  // namespace pstrain
