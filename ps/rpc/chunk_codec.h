// The wire bytes of the messages that carry tensor chunks (Init, Push, Pull),
// written and read without protobuf copying the chunk's data.
//
// The bytes are plain protobuf: a message's other fields, then its
// TensorChunk field with the chunk's data last, so any protobuf reader (the
// generated stubs of tests and other clients) reads them as usual. The
// writer sends the data from the tensor's own memory (a slice of it); the
// reader copies it once, from gRPC's buffers straight into the tensor that
// TensorAssembler reassembles. A message whose chunk is laid out otherwise
// (the data not last) is still read, through a copy.
#ifndef PSTRAIN_PS_RPC_CHUNK_CODEC_H_
#define PSTRAIN_PS_RPC_CHUNK_CODEC_H_

#include <google/protobuf/message_lite.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

#include <cstddef>

#include "core/status.h"
#include "proto/tensor.pb.h"
#include "ps/tensor_chunks.h"

namespace pstrain {

// A message of which field number `chunk_field` is a TensorChunk: `rest` (the
// message's other fields; the chunk field unset), then the chunk `head` with
// `data` as its data, sent from the slice's own memory (a BorrowedSlices'
// or a SharedTensorSlice).
grpc::ByteBuffer EncodeChunkMessage(const google::protobuf::MessageLite& rest, int chunk_field,
                                    const proto::TensorChunk& head, grpc::Slice data);

// Reads one such message: every field but the chunk into *rest, the chunk
// into *assembler (when null, the chunk is skipped unread). Returns whether
// the message had a chunk. InvalidArgument naming rest's type for bytes that
// are not a valid message or hold two chunks, and the assembler's error for
// a chunk it refuses. After an error, the assembler may hold part of the
// chunk: the caller drops the whole stream.
StatusOr<bool> DecodeChunkMessage(grpc::ByteBuffer* buffer, int chunk_field,
                                  google::protobuf::MessageLite* rest, TensorAssembler* assembler);

}  // namespace pstrain

#endif  // PSTRAIN_PS_RPC_CHUNK_CODEC_H_
