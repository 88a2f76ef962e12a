// Options shared by every pstrain gRPC server and channel: tensors are
// chunked, but a generous message limit keeps headers and status replies
// unbounded, and a channel reconnects quickly after its peer restarts.
#ifndef PSTRAIN_PS_RPC_GRPC_OPTIONS_H_
#define PSTRAIN_PS_RPC_GRPC_OPTIONS_H_

#include <grpcpp/grpcpp.h>

namespace pstrain {

void ConfigureMessageSizes(grpc::ServerBuilder* builder);
grpc::ChannelArguments DefaultChannelArguments();

}  // namespace pstrain

#endif  // PSTRAIN_PS_RPC_GRPC_OPTIONS_H_
