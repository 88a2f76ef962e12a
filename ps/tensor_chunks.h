// Moving tensors through TensorChunk messages: splitting on the sending side,
// checked reassembly on the receiving side. Every RPC that carries tensors
// (Init, Pull, Push) goes through here, so no message-size limit applies and
// a malformed stream is rejected in one place.
#ifndef PSTRAIN_PS_TENSOR_CHUNKS_H_
#define PSTRAIN_PS_TENSOR_CHUNKS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "core/status.h"
#include "core/tensor.h"
#include "proto/tensor.pb.h"

namespace pstrain {

// Default bytes of tensor data per message: well under gRPC's 4 MiB limit.
constexpr uint32_t kDefaultChunkBytes = 1 << 20;

// Fills *chunk with each chunk of `tensor` in turn (at least one, even when
// empty), in order of offset, and calls emit after each. *chunk is usually
// a field of the outgoing message, so the bytes are copied once. Stops at,
// and returns, the first false from emit.
bool ForEachChunk(const std::string& name, const Tensor& tensor, uint32_t chunk_bytes,
                  proto::TensorChunk* chunk, const std::function<bool()>& emit);

// Reassembles named tensors from a stream of chunks. Each tensor's chunks must
// arrive in order of offset with consistent metadata. Not thread-safe.
class TensorAssembler {
 public:
  // Adds one chunk. InvalidArgument, naming the tensor, for a chunk that does
  // not fit: wrong dtype, shape and size disagreeing, a gap or overlap, or
  // data past the end.
  Status Add(const proto::TensorChunk& chunk);
  // Checks every tensor arrived whole and hands them over.
  StatusOr<std::map<std::string, Tensor>> Finish();

 private:
  struct Pending {
    Tensor tensor;
    uint64_t received = 0;
  };
  std::map<std::string, Pending> pending_;
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_TENSOR_CHUNKS_H_
