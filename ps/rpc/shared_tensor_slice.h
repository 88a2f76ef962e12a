// A gRPC slice of a tensor's memory that holds a reference to the tensor, so
// a tensor goes onto the wire without a copy and its sender never waits for
// gRPC to let go of it.
//
// A server handler must not wait for its call's slices: gRPC may keep a
// slice of a message that a client stopped reading until the call is
// destroyed, which is after the handler returns. The tensor lives as long
// as the slice instead.
#ifndef PSTRAIN_PS_RPC_SHARED_TENSOR_SLICE_H_
#define PSTRAIN_PS_RPC_SHARED_TENSOR_SLICE_H_

#include <grpcpp/support/slice.h>

#include <cstddef>
#include <memory>

#include "core/tensor.h"

namespace pstrain {

// [data, data + size), which lies inside *tensor; the tensor must not change
// while anyone holds it (VariableStore's shared values never do).
grpc::Slice SharedTensorSlice(std::shared_ptr<const Tensor> tensor, const char* data, size_t size);

}  // namespace pstrain

#endif  // PSTRAIN_PS_RPC_SHARED_TENSOR_SLICE_H_
