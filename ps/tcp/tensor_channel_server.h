// TensorChannelServer: the ps's tensor channel on a TCP port and, without
// TLS, on a local socket for the tasks in its network namespace (the only
// way shared memory reaches it: shared_region.h). Each request of each
// connection is served by ServeTensorRequest (tensor_channel_service.h).
//
// A connection costs memory, not a thread: one event loop (Boost.Asio, on
// a thread of its own) accepts connections, greets each (a Hello frame,
// after the TLS handshake with TLS, which the loop moves on as the
// client's bytes come, without waiting), reads each one's next request as its
// bytes come, without waiting (request_reader.h), and closes the ones that
// overstay. A request, once whole, is served from memory on a thread of
// the ps's request pool (shared with gRPC; requests past its threads wait
// their turn); one larger than `gather_bytes` is served once that much has
// come, its thread reading the rest. The thread writes the reply as far as
// the socket takes it at once and leaves the rest to the loop, which sends
// it as the client reads (reply_writer.h), over TLS too. A pull that must wait for its
// sync step gives its thread back: it waits without one
// (PsCore::AwaitPullable) while the loop watches its connection, and is
// answered on a pool thread once the step comes. What keeps a client from
// hoarding the ps (ChannelLimits):
//   - a deadline from accepting a connection to its first request's first
//     byte (the TLS handshake included), and a cap on TLS handshakes under
//     way (past it, the one idle longest is dropped for the new one; a
//     connection that sends nothing has none), and for each frame's bytes once
//     begun (a sender that trickles is closed at it, having held no
//     thread);
//   - an idle limit between requests;
//   - a cap on connections, overall and per peer (an address, or a local
//     process): a connection past either takes the place of an idle one
//     (one that never sent a request first, then the one idle longest), and
//     is refused only when none is idle (an Error frame; with TLS, closed);
//   - a cap on requests served at once, overall and per peer: a peer's
//     requests past its share wait for its own to end;
//   - a cap on the shared memory all connections may have the ps map, and
//     on the bytes of requests being gathered (past it, each is served as
//     it stands);
//   - a cap on the bytes of replies all connections may leave to the loop
//     (past it, a reply's thread waits for its client), and a deadline for
//     each reply's bytes to be read;
//   - a pull waiting for a step ends when its client hangs up.
// A connection closed while idle gets an Error frame saying so first: a
// client whose request crossed it knows the ps read none of it.
//
// Thread-safe. Stop (also the destructor's) ends every connection and
// waits for the loop and the requests being served.
#ifndef PSTRAIN_PS_TCP_TENSOR_CHANNEL_SERVER_H_
#define PSTRAIN_PS_TCP_TENSOR_CHANNEL_SERVER_H_

#include <openssl/ssl.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "core/mutex.h"
#include "core/status.h"
#include "core/thread_pool.h"
#include "ps/memory_budget.h"
#include "ps/ps_core.h"
#include "ps/tcp/reply_writer.h"
#include "ps/tcp/request_reader.h"
#include "ps/tcp/socket.h"
#include "ps/tcp/tensor_channel_service.h"

namespace pstrain {
namespace tcp {

struct ChannelLimits {
  int max_connections = 4096;  // at once
  int max_per_peer = 1024;     // from one address, or one local process
  // Requests of one peer served at once (a pull waiting for its step is
  // not being served); more wait for the peer's own to end.
  int max_requests_per_peer = 128;
  // From accepting a connection to its first request's first byte (with
  // TLS, the handshake within it).
  std::chrono::milliseconds handshake{10000};
  // TLS handshakes under way at once (a connection's first byte begins
  // one); past it, the one that has waited longest for its client is
  // dropped for the new one.
  int max_handshakes = 1024;
  // Between requests; frames.idle bounds the gaps inside one.
  std::chrono::milliseconds idle{300000};
  FrameTimeouts frames;
  // Bytes of shared memory all connections together may have the ps map
  // (0: the machine's memory).
  uint64_t max_shared_bytes = 0;
  // Bytes of one request the loop gathers before a thread serves it (and
  // reads the rest itself).
  size_t gather_bytes = RequestReader::kDefaultCap;
  // Bytes all connections' requests being gathered may hold together; past
  // them, a request is served as it stands.
  uint64_t max_gathered_bytes = uint64_t{256} << 20;
  // Bytes of replies all connections together may leave to the loop to
  // send as their clients read; past them, a reply's thread waits for its
  // client.
  uint64_t max_kept_reply_bytes = uint64_t{256} << 20;
};

class TensorChannelServer {
 public:
  // Listens on host:port (port 0: a free one), and, without tls, on a
  // local socket. tls: every TCP connection must complete a TLS handshake
  // with this server context (core/tls.h) first; one that does not is
  // closed and logged.
  // Requests are served on `requests` (borrowed; it must outlive the
  // server).
  static StatusOr<std::unique_ptr<TensorChannelServer>> Start(
      PsCore* core, ThreadPool* requests, const std::string& host, int port,
      const ChannelLimits& limits, std::shared_ptr<SSL_CTX> tls = nullptr);
  ~TensorChannelServer();

  int port() const { return tcp_->port(); }
  // The local socket's name ("@pstrain-..."); empty without one.
  std::string local_socket() const { return local_ != nullptr ? local_->name() : ""; }
  void Stop();

  // What the server holds now, for tests and logs.
  struct Counts {
    int connections = 0;            // open, idle or serving
    int handshaking = 0;            // with a TLS handshake under way, held by no thread
    int gathering = 0;              // with a request's bytes coming, held by no thread
    int serving = 0;                // with a request being served
    int waiting = 0;                // with a request waiting for its peer's turn
    int sending = 0;                // with a reply the loop sends, held by no thread
    uint64_t kept_reply_bytes = 0;  // of those replies, not yet sent
    int threads = 0;                // of the request pool (both transports')
  };
  Counts counts() const;

 private:
  struct Connection;
  using ConnectionPtr = std::shared_ptr<Connection>;
  using Clock = std::chrono::steady_clock;
  TensorChannelServer(PsCore* core, ThreadPool* requests, const ChannelLimits& limits,
                      std::shared_ptr<SSL_CTX> tls);

  // A peer's connections and requests.
  struct Peer {
    int connections = 0;
    int serving = 0;
    std::list<ConnectionPtr> waiting;  // readable, waiting for one of its requests to end
  };

  // Loop thread: accepts what `listener` has waiting, then waits again.
  void AcceptFrom(Listener* listener, boost::asio::posix::stream_descriptor* ready);
  // Loop thread: takes a connection in, making room for it, or refuses it.
  void Admit(std::unique_ptr<Socket> socket);
  // Loop thread: moves c's TLS handshake on as far as its client's bytes
  // allow (begun by the first), then greets it.
  void Handshake(const ConnectionPtr& c);
  // Loop thread: Handshake once c's socket is readable (`write`: writable).
  void AwaitHandshake(const ConnectionPtr& c, bool write);
  // Loop thread: room for one more handshake: drops the one that has
  // waited longest for its client.
  void DropIdlestHandshake();
  // Loop thread: closes an idle connection (of `peer` when not empty): one
  // that never sent a request, else the one idle longest; false when none
  // is idle.
  bool EvictIdle(const std::string& peer);
  // Loop thread: waits for c's next request, at most `limit`.
  void AwaitRequest(const ConnectionPtr& c, std::chrono::milliseconds limit);
  // Loop thread: Gather once c is readable.
  void WaitReadable(const ConnectionPtr& c);
  // Loop thread: reads what c's request has sent; dispatches it once whole,
  // else waits for more under its frame's deadline.
  void Gather(const ConnectionPtr& c);
  // Loop thread: closes c with reason() at `when`, unless it is armed
  // again (or c is busy) first. The reason is made only then: the timer is
  // armed for every request.
  void CloseAt(const ConnectionPtr& c, Clock::time_point when, std::function<Status()> reason);
  // Loop thread: counts what c's reader holds in gathered_bytes_.
  void Account(const ConnectionPtr& c);
  // Loop thread: c's request is served now, or once its peer's is.
  void Dispatch(const ConnectionPtr& c);
  // Loop thread: hands c to the pool to serve, counted until it is done.
  void Submit(const ConnectionPtr& c);
  // Pool thread: one request of c's.
  void Serve(const ConnectionPtr& c);
  // Pool thread: keeps c's pull, which must wait for its step, with its
  // wait; whether it waits (PsCore::AwaitPullable).
  StatusOr<bool> Park(const ConnectionPtr& c, const proto::PullRequest& request);
  // Loop thread: closes c, whose pull is parked, when its client hangs up.
  void WatchParked(const ConnectionPtr& c);
  // Loop thread: c's parked pull's wait is over: it is answered.
  void Unpark(const ConnectionPtr& c, const Status& waited);
  // Loop thread: c's request has its thread back; its reply is sent
  // (SendReply) before c is Answered.
  void Served(const ConnectionPtr& c, const Status& served);
  // Loop thread: sends what c's reply has left as its client reads, then
  // Answered; closes c at the reply's deadline.
  void SendReply(const ConnectionPtr& c, const Status& served);
  // Loop thread: c is idle again (ok), or closes.
  void Answered(const ConnectionPtr& c, const Status& served);
  // Loop thread. `why`, when not ok, goes to a client that is not being
  // answered in an Error frame.
  void Close(const ConnectionPtr& c, const Status& why = OkStatus());

  PsCore* const core_;
  const ChannelLimits limits_;
  const std::shared_ptr<SSL_CTX> tls_;  // null: plain TCP
  SharedMemoryBudget shared_budget_;    // outlives every connection
  MemoryBudget kept_replies_;           // the same
  std::unique_ptr<Listener> tcp_;
  std::unique_ptr<Listener> local_;  // null with TLS
  std::atomic<bool> stopping_{false};
  bool started_ = false;  // the loop runs
  std::atomic<int> serving_{0};
  std::atomic<int> waiting_{0};
  std::atomic<int> sending_{0};
  std::atomic<int> gathering_{0};
  std::atomic<int> handshaking_{0};
  std::atomic<int64_t> gathered_bytes_{0};
  std::atomic<int> connection_count_{0};

  boost::asio::io_context io_;
  // Loop thread only, from here on.
  std::unique_ptr<boost::asio::posix::stream_descriptor> tcp_ready_, local_ready_;
  std::list<ConnectionPtr> connections_;
  std::map<std::string, Peer> peers_;
  ThreadPool* const pool_;
  // Serve calls submitted to the pool and not yet returned: Stop waits for
  // them.
  Mutex submitted_mu_;
  std::condition_variable submitted_done_;
  int submitted_ ABSL_GUARDED_BY(submitted_mu_) = 0;
  // Declared last: the loop goes before what it uses.
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::thread loop_;
};

}  // namespace tcp
}  // namespace pstrain

#endif  // PSTRAIN_PS_TCP_TENSOR_CHANNEL_SERVER_H_
