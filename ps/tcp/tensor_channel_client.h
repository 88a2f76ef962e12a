// TensorChannelClient: a worker's or the chief's side of one ps's tensor
// channel (ps/tcp/tensor_frames.h). Push and Pull as PsConnection speaks
// them; each call takes an idle connection (or opens one) and gives it back
// after a clean exchange, so concurrent calls each have their own.
//
// With a ps on this host, connections go through the ps's local socket,
// and each can carry its float32 tensors through a shared memory region
// instead of the socket (shared_region.h): the client hands the ps one,
// sized to the largest exchange seen so far, beside an ShmAttach frame, and
// goes on over the socket alone if the ps cannot map it. Where the local
// socket cannot be reached (another network namespace: a container), the
// client goes over TCP without shared memory. Tensors that do not fit
// travel on the socket.
// Thread-safe.
#ifndef PSTRAIN_PS_TCP_TENSOR_CHANNEL_CLIENT_H_
#define PSTRAIN_PS_TCP_TENSOR_CHANNEL_CLIENT_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/mutex.h"
#include "core/status.h"
#include "core/tensor.h"
#include "proto/ps.pb.h"
#include "ps/client/ps_connection.h"
#include "ps/tcp/shared_region.h"
#include "ps/tcp/socket.h"
#include "ps/tcp/tensor_frames.h"
#include "ps/tcp/tls_stream.h"

namespace pstrain {
namespace tcp {

class TensorChannelClient {
 public:
  // Does not connect yet. local_socket: the ps's local socket
  // ("@pstrain-..."), for a ps on this host: connections go there, and
  // offer the ps shared memory; empty: TCP only. tls: every connection is
  // TLS with this client context (core/tls.h), which also rules the local
  // socket out: the tensors then travel encrypted, like everything else.
  TensorChannelClient(std::string host, int port, std::string local_socket = "",
                      std::shared_ptr<SSL_CTX> tls = nullptr)
      : host_(std::move(host)),
        port_(port),
        local_socket_(tls == nullptr ? std::move(local_socket) : ""),
        tls_(std::move(tls)) {}

  // Errors are the ps's refusal as it sent it, or Unavailable /
  // DeadlineExceeded for a connection that failed or stalled for `timeout`.
  // Where the channel could not take the request at all (the ps
  // unreachable on it, or refusing the connection), the error's hint is
  // Hint::kNotSent: nothing reached the ps, and the caller may send it
  // another way.
  // The gradients travel as `wire` (DT_FLOAT or DT_BFLOAT16). `into` (may
  // be null): where the ps writes each variable's value after the push
  // (PsConnection::PushAndPull), asked only when every one lies in the
  // arena the ps maps on the push's connection.
  StatusOr<proto::PushResponse> Push(const proto::PushHeader& header, const NamedTensors& grads,
                                     proto::DataType wire, std::chrono::milliseconds timeout,
                                     const std::map<std::string, Tensor>* into = nullptr);
  // A push on a connection of its own, each tensor put on the wire as it is
  // written (PushStream); the header goes out at once. Errors as Push's.
  StatusOr<std::unique_ptr<PushStream>> StartPush(const proto::PushHeader& header,
                                                  proto::DataType wire,
                                                  std::chrono::milliseconds timeout);
  // Fills `out` as PsConnection::Pull does, assembling into the tensors
  // already there where names and shapes match; the values travel as
  // request.wire_dtype() says.
  Status Pull(const proto::PullRequest& request, std::map<std::string, Tensor>* out, int64_t* step,
              std::chrono::milliseconds timeout);

  // Whether the ps mapped this client's shared regions (false until one
  // was offered, and for good once the ps could not or none could be made).
  bool sharing_memory() const { return shared_.load() && !refused_.load(); }
  // Whether connections go through the ps's local socket.
  bool local() const { return !local_socket_.empty() && !local_unreachable_.load(); }

  // The task's arena (ps/tcp/shared_arena.h), offered to the ps on every
  // connection that shares memory: tensors kept in it are pushed from and
  // pulled into where they lie, copied by no one but the ps.
  void UseArena(std::shared_ptr<const SharedRegion> arena);

 private:
  struct Connection {
    std::unique_ptr<Socket> socket;  // TCP, or the ps's local socket
    std::unique_ptr<TlsStream> tls;  // over socket, with TLS
    ByteStream* stream() {
      return tls != nullptr ? static_cast<ByteStream*>(tls.get()) : socket.get();
    }
    std::unique_ptr<SharedRegion> region;       // mapped by the ps too; null: none
    uint64_t placed = 0;                        // bytes of this exchange placed in the region
    std::shared_ptr<const SharedRegion> arena;  // the arena the ps mapped on it; null: none
  };
  class Pushing;

  StatusOr<std::unique_ptr<Connection>> Take(std::chrono::milliseconds timeout);
  // Push and Pull on one connection; the public ones try once more when
  // the ps closed it idle as the request went out, reading none of it
  // (Action::kResend).
  StatusOr<proto::PushResponse> PushOnce(const proto::PushHeader& header, const NamedTensors& grads,
                                         proto::DataType wire, std::chrono::milliseconds timeout,
                                         const std::map<std::string, Tensor>* into);
  Status PullOnce(const proto::PullRequest& request, std::map<std::string, Tensor>* out,
                  int64_t* step, std::chrono::milliseconds timeout);
  void GiveBack(std::unique_ptr<Connection> connection);
  // Offers the ps a region of at least wanted_ bytes on `c` unless it has
  // one that large. A refusal is remembered; only a broken connection is
  // an error.
  Status ShareMemory(Connection* c);
  // Offers the ps `arena` on `c`; a refusal is remembered.
  Status AttachArena(Connection* c, std::shared_ptr<const SharedRegion> arena);
  // Sends `region`'s descriptor and size in a `kind` frame (ShmAttach or
  // ShmAttachArena) on `c` and reads the ps's answer; its Error frame's
  // status when it refused the frame (and closed the connection).
  StatusOr<proto::ShmAttachReply> Attach(Connection* c, FrameKind kind, const SharedRegion& region);
  // A new connection, greeted by the ps: to the local socket where there is
  // one and it can be reached, else over TCP. Its errors say
  // Hint::kNotSent: nothing was sent.
  StatusOr<std::unique_ptr<Connection>> Connect(std::chrono::milliseconds timeout);
  // Whether `t` lies in the arena and the ps mapped it on `c`; its offset.
  static bool InArena(const Connection& c, const Tensor& t, uint64_t* offset);
  // Adds `tensor` to `frames`: where it lies in the arena, into c's region
  // where it fits, else on the socket as `wire`.
  void AddTensor(Connection* c, FrameBatch* frames, const std::string& name, const Tensor& tensor,
                 proto::DataType wire);
  // Asks for regions of at least `bytes` from now on.
  void Want(uint64_t bytes);
  // Reads the ps's one-frame answer, a `kind` frame, into `reply`; its Error
  // frame's status, or DataLoss naming another frame in reply `to_what`.
  static Status ReadReply(ByteStream* stream, FrameKind kind, const char* to_what,
                          google::protobuf::MessageLite* reply);
  // The reply to a request whose sending failed with `sent`: the ps's Error
  // frame when it refused (and closed) first, else `sent`.
  static Status RefusalOr(ByteStream* stream, const Status& sent);
  // Reads the ps's answer to a push that was sent whole, and gives the
  // connection back after a clean one.
  StatusOr<proto::PushResponse> FinishPush(std::unique_ptr<Connection> c);

  const std::string host_;
  const int port_;
  const std::string local_socket_;         // empty: none
  const std::shared_ptr<SSL_CTX> tls_;     // null: plain TCP
  std::atomic<uint64_t> wanted_{1 << 20};  // bytes of the largest exchange so far
  // The largest region there was room for, once one could not be made.
  std::atomic<uint64_t> region_cap_{SharedRegion::kMaxBytes};
  std::atomic<bool> shared_{false};             // a region was mapped by the ps
  std::atomic<bool> refused_{false};            // the ps could not map one
  std::atomic<bool> arena_refused_{false};      // the ps could not map the arena
  std::atomic<bool> local_unreachable_{false};  // the local socket is not here
  Mutex mu_;
  std::vector<std::unique_ptr<Connection>> idle_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const SharedRegion> arena_ ABSL_GUARDED_BY(mu_);  // null: none
};

}  // namespace tcp
}  // namespace pstrain

#endif  // PSTRAIN_PS_TCP_TENSOR_CHANNEL_CLIENT_H_
