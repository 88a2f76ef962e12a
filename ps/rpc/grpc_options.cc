#include "ps/rpc/grpc_options.h"

#include <grpc/grpc.h>

#include <utility>

namespace pstrain {

namespace {

constexpr int kMaxMessageBytes = 64 << 20;
constexpr int kKeepaliveMs = static_cast<int>(kKeepalive.count());

// The keepalive, the same on both ends: a ping every kKeepalive, on a
// connection with no call or no data too, answered within kKeepalive.
constexpr std::pair<const char*, int> kKeepaliveArgs[] = {
    {GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveMs},
    {GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveMs},
    {GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1},
    {GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0},
};

// gRPC shuts itself down when its last server or channel goes, and 1.51's
// shutdown joins its executor thread, which may first wait out a timer (a
// keepalive's: up to kKeepalive): a ps took 10 s to exit after the chief's
// shutdown. One reference held for the life of the process keeps gRPC up
// until the process exits, which ends its threads without waiting.
void HoldGrpcForTheProcess() {
  static const bool held = [] {
    grpc_init();
    return true;
  }();
  (void)held;
}

}  // namespace

void ConfigureServer(grpc::ServerBuilder* builder) {
  HoldGrpcForTheProcess();
  builder->SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder->SetMaxSendMessageSize(kMaxMessageBytes);
  for (const auto& [name, value] : kKeepaliveArgs) builder->AddChannelArgument(name, value);
  // Clients ping every kKeepalive; gRPC's default would answer pings more
  // often than every 5 minutes with GOAWAY.
  builder->AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                              kKeepaliveMs / 2);
}

grpc::ChannelArguments DefaultChannelArguments() {
  HoldGrpcForTheProcess();
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  // Reconnect quickly after a peer restarts instead of gRPC's 1 s..120 s back-off.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  // Despite its name, gRPC reads this as the least time a connection
  // attempt (TCP and HTTP/2 handshake) is given before it is abandoned and
  // made again. At 100 ms, a ps accepting a thousand workers' connections
  // at once answered many handshakes too late; each was thrown away and
  // redone on both sides, and a 1,000-worker, 16-ps job took 100 s to
  // start instead of 30. gRPC's own default. A ps that restarts refuses
  // connections until it listens, which fails an attempt at once, so the
  // back-off above still applies; a host that drops them silently (down, or
  // a pod's old address) holds an attempt up to 20 s, and calls meanwhile
  // end at their own deadlines.
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 20000);
  for (const auto& [name, value] : kKeepaliveArgs) args.SetInt(name, value);
  args.SetInt(GRPC_ARG_HTTP2_MIN_SENT_PING_INTERVAL_WITHOUT_DATA_MS, kKeepaliveMs);
  return args;
}

}  // namespace pstrain
