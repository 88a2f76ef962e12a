// Reading a client stream whose messages gRPC hands over unparsed.
//
// gRPC's synchronous ServerReader<Message> reports a message it cannot parse
// exactly as it reports the end of the stream, so a stream that ends in
// garbage would look whole. The Ps service therefore registers its
// client-streaming methods with grpc::ByteBuffer messages and parses each one
// here, where garbage is an error.
#ifndef PSTRAIN_PS_RPC_UNPARSED_STREAM_H_
#define PSTRAIN_PS_RPC_UNPARSED_STREAM_H_

#include <grpcpp/grpcpp.h>

#include <string>

#include "core/status.h"

namespace pstrain {

// Reads the next message into *msg: true, or false at the stream's clean
// end. InvalidArgument for a message that does not parse as Message;
// Aborted when the stream broke off (the client went away, or a message was
// over the size limit).
template <typename Message>
StatusOr<bool> ReadParsed(grpc::ServerContext* ctx, grpc::ServerReader<grpc::ByteBuffer>* reader,
                          Message* msg) {
  grpc::ByteBuffer buffer;
  if (!reader->Read(&buffer)) {
    if (ctx->IsCancelled()) return Aborted("the stream broke off");
    return false;
  }
  if (!grpc::SerializationTraits<Message>::Deserialize(&buffer, msg).ok()) {
    return InvalidArgument("a message of the stream is not a valid " +
                           Message::descriptor()->full_name());
  }
  return true;
}

}  // namespace pstrain

#endif  // PSTRAIN_PS_RPC_UNPARSED_STREAM_H_
