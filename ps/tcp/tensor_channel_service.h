// The ps's side of the tensor channel (ps/tcp/tensor_frames.h): one
// request (a Push, a Pull, or an offer of shared memory) read from a byte
// stream and served by a PsCore through the same stream handling and
// checks as gRPC's (ps/tensor_streams.h). TensorChannelServer
// (tensor_channel_server.h) calls it for each request of each connection.
#ifndef PSTRAIN_PS_TCP_TENSOR_CHANNEL_SERVICE_H_
#define PSTRAIN_PS_TCP_TENSOR_CHANNEL_SERVICE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include "core/status.h"
#include "proto/ps.pb.h"
#include "ps/ps_core.h"
#include "ps/tcp/shared_region.h"
#include "ps/tcp/tensor_frames.h"

namespace pstrain {
namespace tcp {

// How long a client may take over its bytes. A frame must arrive whole
// within `frame` of its first byte, plus the time its data takes at
// kMinBytesPerSecond; a request's next frame must begin within `idle`
// (a streamed push waits for backward between its tensors). Replies get
// the same time to leave.
struct FrameTimeouts {
  static constexpr double kMinBytesPerSecond = 16.0 * (1 << 20);
  std::chrono::milliseconds frame{10000};
  std::chrono::milliseconds idle{60000};
  // The deadline of a frame with `bytes` of data begun at `begun`.
  std::chrono::steady_clock::time_point DeadlineFor(
      uint64_t bytes,
      std::chrono::steady_clock::time_point begun = std::chrono::steady_clock::now()) const;
};

// The stream's next frame: its first byte within timeouts.idle, the rest by
// its deadline, which stays set on the stream for the frame's data.
StatusOr<Frame> ReadFrameWithin(ByteStream* stream, const FrameTimeouts& timeouts);

// The shared memory every connection of a ps may map, together: what
// keeps local clients from filling its address space.
struct SharedMemoryBudget {
  explicit SharedMemoryBudget(uint64_t limit) : limit(limit) {}
  const uint64_t limit;
  std::atomic<uint64_t> used{0};
};

// What a connection keeps from one request to the next. Gives its regions'
// bytes back to the budget when it goes.
struct ChannelConnection {
  ChannelConnection() = default;
  ChannelConnection(const ChannelConnection&) = delete;
  ChannelConnection& operator=(const ChannelConnection&) = delete;
  ~ChannelConnection();
  // Maps `region` as *slot (the region or the arena), giving back what the
  // slot held; ResourceExhausted past the budget.
  Status Keep(std::unique_ptr<SharedRegion> region, std::unique_ptr<SharedRegion>* slot);
  // Unmaps both, giving their bytes back.
  void Release() {
    (void)Keep(nullptr, &region);
    (void)Keep(nullptr, &arena);
  }

  // Whether the ps maps the shared memory the client offers: only on a
  // local socket (the descriptor travels beside the frame), never over TLS.
  bool shared_memory = false;
  SharedMemoryBudget* budget = nullptr;  // null: no limit
  std::unique_ptr<SharedRegion> region;  // offered by the client; null: none
  std::unique_ptr<SharedRegion> arena;
};

// Where a pull that must wait for its step goes, instead of waiting on the
// thread serving it: given the pull's request, true when it took the pull
// (its reply not yet written: ServeParkedPull writes it once the wait is
// over), false when the pull is answered now, or why it is refused.
using ParkPull = std::function<StatusOr<bool>(const proto::PullRequest& request)>;

// Serves the connection's next request, whose first byte has come (or is
// about to). OkStatus: the connection may carry another (or, parked, waits
// for its pull's reply). Unavailable when the client hung up before a
// request began, else the request's error, which went back to the client
// in an Error frame: the caller closes the connection. Without `park`, a
// pull waiting for a step waits on this thread, and gives up when
// `cancelled` says so or the client hangs up.
Status ServeTensorRequest(PsCore* core, ByteStream* stream, ChannelConnection* connection,
                          const FrameTimeouts& timeouts, const std::function<bool()>& cancelled,
                          const ParkPull& park = nullptr);
// Answers a pull `park` took, once its wait ended with `waited`: the reply,
// or the wait's error in an Error frame (returned, as ServeTensorRequest's).
Status ServeParkedPull(PsCore* core, ByteStream* stream, ChannelConnection* connection,
                       const FrameTimeouts& timeouts, const proto::PullRequest& request,
                       const Status& waited, const std::function<bool()>& cancelled);

// Serves requests one after the other until the stream ends (OkStatus) or
// one fails (its error): a connection served by one thread, as the fuzz
// target serves its input, each request gathered first by a RequestReader
// (request_reader.h) from what the stream has, as the ps's loop gathers it.
Status ServeTensorConnection(PsCore* core, ByteStream* stream,
                             const std::function<bool()>& cancelled, bool shared_memory = true);

}  // namespace tcp
}  // namespace pstrain

#endif  // PSTRAIN_PS_TCP_TENSOR_CHANNEL_SERVICE_H_
