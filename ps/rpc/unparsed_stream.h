// Reading a client stream whose messages gRPC hands over unparsed.
//
// gRPC's generated readers report a message they cannot parse exactly as
// they report the end of the stream, so a stream that ends in garbage would
// look whole. The Ps service therefore takes its client-streaming methods'
// messages as grpc::ByteBuffers and decodes each one here
// (ps/rpc/chunk_codec.h), where garbage is an error and a chunk's data goes
// straight into the tensor being assembled.
#ifndef PSTRAIN_PS_RPC_UNPARSED_STREAM_H_
#define PSTRAIN_PS_RPC_UNPARSED_STREAM_H_

#include <grpcpp/grpcpp.h>

#include "core/status.h"
#include "ps/rpc/chunk_codec.h"
#include "ps/tensor_streams.h"

namespace pstrain {

// Decodes one message of an Init or Push stream (Request is InitRequest or
// PushRequest: a oneof of header 1 and chunk 2) as NextPart describes.
template <typename Request, typename Header>
StatusOr<StreamPart> DecodeStreamPart(grpc::ByteBuffer* buffer, Header* header,
                                      TensorAssembler* assembler) {
  Request rest;
  PS_ASSIGN_OR_RETURN(bool has_chunk,
                      DecodeChunkMessage(buffer, Request::kChunkFieldNumber, &rest, assembler));
  if (has_chunk && rest.has_header()) {
    return InvalidArgument("a message holds both a header and a chunk");
  }
  if (has_chunk) return StreamPart::kChunk;
  if (!rest.has_header()) return StreamPart::kNeither;
  *header = rest.header();
  return StreamPart::kHeader;
}

// NextPart over a client stream, read with reader->Read(grpc::ByteBuffer*)
// (ps/rpc/gathering_reader.h): Aborted when the stream broke off (the
// client went away, or a message was over the size limit).
template <typename Request, typename Header, typename Reader>
NextPart<Header> ReadStreamParts(grpc::ServerContextBase* ctx, Reader* reader) {
  return [ctx, reader](Header* header, TensorAssembler* assembler) -> StatusOr<StreamPart> {
    grpc::ByteBuffer buffer;
    if (!reader->Read(&buffer)) {
      if (ctx->IsCancelled()) return Aborted("the stream broke off");
      return StreamPart::kEnd;
    }
    return DecodeStreamPart<Request>(&buffer, header, assembler);
  };
}

}  // namespace pstrain

#endif  // PSTRAIN_PS_RPC_UNPARSED_STREAM_H_
