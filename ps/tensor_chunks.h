// Moving tensors through TensorChunk messages: splitting on the sending side,
// checked reassembly on the receiving side. Every RPC that carries tensors
// (Init, Pull, Push) goes through here, so no message-size limit applies and
// a malformed stream is rejected in one place.
#ifndef PSTRAIN_PS_TENSOR_CHUNKS_H_
#define PSTRAIN_PS_TENSOR_CHUNKS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "core/status.h"
#include "core/tensor.h"
#include "proto/tensor.pb.h"

namespace pstrain {

// Default bytes of tensor data per message: well under gRPC's 4 MiB limit.
constexpr uint32_t kDefaultChunkBytes = 1 << 20;

// Calls emit with each chunk of `tensor` in turn (at least one, even when
// empty), in order of offset: the chunk's fields but its data, and the data,
// which stays in the tensor (a transport sends it from there). Stops at, and
// returns, the first false from emit.
using ChunkEmitter =
    std::function<bool(const proto::TensorChunk& head, const char* data, size_t size)>;
bool ForEachChunkSpan(const std::string& name, const Tensor& tensor, uint32_t chunk_bytes,
                      const ChunkEmitter& emit);

// As ForEachChunkSpan, with each chunk whole, data included, in *chunk
// (usually a field of the outgoing message, so the bytes are copied once)
// when emit is called.
bool ForEachChunk(const std::string& name, const Tensor& tensor, uint32_t chunk_bytes,
                  proto::TensorChunk* chunk, const std::function<bool()>& emit);

// Reassembles named tensors from a stream of chunks. Each tensor's chunks must
// arrive in order of offset with consistent metadata. Nothing is allocated
// for a tensor before its shape has been checked against the limits, so a
// stream from outside cannot make the receiver allocate more than
// limits.max_bytes. Not thread-safe.
class TensorAssembler {
 public:
  struct Limits {
    // Bytes the stream may make the receiver hold: every tensor's data, plus
    // its name and kOverheadBytes of bookkeeping.
    uint64_t max_bytes = UINT64_MAX;
    // Called on each tensor's first chunk, before anything is allocated for
    // it; an error refuses the chunk (say, a gradient for an unknown
    // variable, or of another shape). May be empty.
    std::function<Status(const std::string& name, const Shape& shape)> check;
  };
  static constexpr uint64_t kOverheadBytes = 128;

  TensorAssembler() : TensorAssembler(Limits()) {}
  explicit TensorAssembler(Limits limits) : limits_(std::move(limits)) {}

  // Adds one chunk. InvalidArgument, naming the tensor, for a chunk that does
  // not fit: wrong dtype (or one other than its first chunk's), a shape whose size overflows, shape
  // and size disagreeing, a gap or overlap, data past the end, or a second stream of a tensor
  // already whole; ResourceExhausted past limits.max_bytes; the error of limits.check.
  Status Add(const proto::TensorChunk& chunk);
  // As Add for a chunk whose `data_bytes` of data are not in `head` (its
  // data field is ignored): after the same checks, returns where the data
  // goes, for the caller to copy there (a transport, straight from its
  // buffers). The bytes count as received. `wire` is the dtype the chunk
  // travelled as when the transport widened it to head's float32 (DT_INVALID:
  // as head says): a tensor's chunks must all have travelled as one dtype.
  StatusOr<char*> Place(const proto::TensorChunk& head, uint64_t data_bytes,
                        proto::DataType wire = proto::DT_INVALID);
  // As Place for a chunk that is its whole tensor, whose bytes already lie
  // in memory at `data` (shared memory): after the same checks, the tensor
  // is a view of them (Tensor::View), nothing copied. The caller keeps that
  // memory mapped and unchanged while the tensor lives.
  Status PlaceView(const proto::TensorChunk& head, uint64_t data_bytes, float* data);
  // Tensors to assemble into rather than allocate: one whose name and shape
  // match a tensor's first chunk is taken from *buffers and filled (a buffer
  // reused each round is not page-faulted in again). A view
  // (Tensor::View) is filled in place, straight into the memory it views;
  // one without an owner not filled is dropped from *buffers by FinishInto.
  // Call before Add.
  void Reuse(std::map<std::string, Tensor>* buffers) { reuse_ = buffers; }
  // Checks every tensor arrived whole and hands them over.
  StatusOr<std::map<std::string, Tensor>> Finish();
  // As Finish, into *out (usually the map given to Reuse), replacing the
  // tensors of the same names.
  Status FinishInto(std::map<std::string, Tensor>* out);

 private:
  struct Pending {
    Tensor tensor;
    uint64_t received = 0;
    proto::DataType wire = proto::DT_FLOAT;  // the dtype its first chunk travelled as
  };
  // A buffer for a tensor's first chunk: one from reuse_ that fits, or new.
  Tensor TakeBuffer(const std::string& name, const Shape& shape);
  // Place's checks and bookkeeping; a first chunk's tensor views `view`
  // when set (the chunk must then be the whole tensor), else is a buffer.
  StatusOr<Pending*> Accept(const proto::TensorChunk& head, uint64_t data_bytes, float* view,
                            proto::DataType wire);
  // Accept's first chunk of a tensor: within the limits, it starts the
  // tensor's entry (`shape`, of expected_bytes).
  StatusOr<std::map<std::string, Pending>::iterator> Begin(const proto::TensorChunk& chunk,
                                                           const Shape& shape,
                                                           uint64_t expected_bytes,
                                                           uint64_t data_bytes, float* view,
                                                           proto::DataType wire);

  const Limits limits_;
  uint64_t held_bytes_ = 0;  // counted against limits_.max_bytes
  std::map<std::string, Pending> pending_;
  std::map<std::string, Tensor>* reuse_ = nullptr;
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_TENSOR_CHUNKS_H_
