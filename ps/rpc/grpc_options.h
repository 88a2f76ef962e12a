// Options shared by every pstrain gRPC server and channel: tensors are
// chunked, but a generous message limit keeps headers and status replies
// unbounded; a channel reconnects quickly after its peer restarts; and both
// ends find a dead peer (a cut link, a vanished host) within seconds, as the
// tensor channel does, instead of retransmitting for many minutes.
//
// The keepalive pings an idle connection every kKeepalive and drops one whose
// ping goes unanswered, or whose sent bytes go unacknowledged (gRPC sets
// TCP_USER_TIMEOUT from the keepalive timeout), for kKeepalive: the memory
// that gRPC holds for a stuck write is then released.
//
// Either call keeps gRPC initialized until the process exits, so that a
// task's exit never waits for gRPC's own shutdown.
#ifndef PSTRAIN_PS_RPC_GRPC_OPTIONS_H_
#define PSTRAIN_PS_RPC_GRPC_OPTIONS_H_

#include <grpcpp/grpcpp.h>

#include <chrono>

namespace pstrain {

inline constexpr std::chrono::milliseconds kKeepalive{10000};

void ConfigureServer(grpc::ServerBuilder* builder);
grpc::ChannelArguments DefaultChannelArguments();

}  // namespace pstrain

#endif  // PSTRAIN_PS_RPC_GRPC_OPTIONS_H_
