#include "ps/tcp/tensor_channel_server.h"

#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <utility>
#include <vector>

#include "ps/tcp/request_reader.h"
#include "ps/tcp/tls_stream.h"

namespace pstrain {
namespace tcp {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

namespace {

// Connections taken from a listener before the loop turns to other work.
constexpr int kAcceptBatch = 64;

uint64_t MachineMemory() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page)
                               : UINT64_MAX;
}

// Writes a small frame to a socket no request is being served on, without
// waiting: it fits the socket's buffer, or is dropped.
void WriteNow(Socket* socket, const Status& error) {
  socket->SetDeadline(Clock::now());
  if (error.ok()) {
    (void)WriteFrame(socket, FrameKind::kHello, nullptr);
  } else {
    (void)WriteError(socket, error);
  }
  socket->SetDeadline(Clock::time_point::max());
}

}  // namespace

struct TensorChannelServer::Connection {
  Connection(asio::io_context& io, std::unique_ptr<Socket> s, int ready_fd,
             MemoryBudget* kept_replies)
      : socket(std::move(s)), writer(socket.get(), kept_replies), ready(io, ready_fd), timer(io) {}
  ByteStream* stream() { return &writer; }
  // Whether the next request's first byte is already here (or the peer
  // hung up): asio's epoll waits for the next edge only, and this one may
  // have come while the connection was busy.
  bool ReadableNow() const {
    return reader.pending() || (tls != nullptr && tls->pending()) || socket->ReadableNow();
  }

  // Used by the serving thread while busy, else by the loop.
  std::unique_ptr<Socket> socket;
  std::unique_ptr<TlsStream> tls;  // after the handshake, with TLS
  ReplyWriter writer;              // the socket's stream, or the TLS stream's
  ChannelConnection state;
  RequestReader reader;  // the loop's while it gathers, then the serving thread's
  // Loop thread only.
  asio::posix::stream_descriptor ready;  // a duplicate of the socket's descriptor
  asio::steady_timer timer;              // the handshake, idle or frame limit
  uint64_t timer_armed = 0;              // the latest CloseAt's number
  size_t counted = 0;                    // reader's bytes, in gathered_bytes_
  bool gathering = false;                // a request begun, not yet dispatched
  std::string peer;                      // Socket::PeerKey
  Clock::time_point idle_since;
  bool busy = false;     // a request is being served, waits for its peer's turn, or is answered
  bool sending = false;  // the loop sends the rest of its reply
  bool closed = false;
  bool greeted = false;          // the Hello went out (with TLS: after the handshake)
  bool handshaking = false;      // with TLS: begun, not done (tls is set)
  Clock::time_point progressed;  // the handshake's last step
  bool requested = false;        // has sent a request
  std::list<ConnectionPtr>::iterator at;
  // A pull waiting for its step (PsCore::AwaitPullable) holds no thread:
  // its request and wait are kept here. wait_id is set by the thread that
  // parked it (0: none), the rest by the loop.
  proto::PullRequest parked_pull;  // the serving thread's
  std::atomic<uint64_t> wait_id{0};
  bool parked = false;      // served, its reply waits for the step
  bool wait_ended = false;  // the wait's outcome is in
  Status waited;
};

TensorChannelServer::TensorChannelServer(PsCore* core, ThreadPool* requests,
                                         const ChannelLimits& limits, std::shared_ptr<SSL_CTX> tls)
    : core_(core),
      limits_(limits),
      tls_(std::move(tls)),
      shared_budget_(limits.max_shared_bytes > 0 ? limits.max_shared_bytes : MachineMemory()),
      kept_replies_(limits.max_kept_reply_bytes),
      pool_(requests),
      work_(asio::make_work_guard(io_)) {}

StatusOr<std::unique_ptr<TensorChannelServer>> TensorChannelServer::Start(
    PsCore* core, ThreadPool* requests, const std::string& host, int port,
    const ChannelLimits& limits, std::shared_ptr<SSL_CTX> tls) {
  std::unique_ptr<TensorChannelServer> server(
      new TensorChannelServer(core, requests, limits, std::move(tls)));
  PS_ASSIGN_OR_RETURN(server->tcp_, Listener::Listen(host, port));
  if (server->tls_ == nullptr) {
    auto local = Listener::ListenLocal();
    if (local.ok()) {
      server->local_ = std::move(local).value();
    } else {
      LOG(WARNING) << local.status().message() << "; tasks on this host go over TCP";
    }
  }
  TensorChannelServer* s = server.get();
  s->tcp_ready_ = std::make_unique<asio::posix::stream_descriptor>(s->io_, dup(s->tcp_->fd()));
  asio::post(s->io_, [s] { s->AcceptFrom(s->tcp_.get(), s->tcp_ready_.get()); });
  if (s->local_ != nullptr) {
    s->local_ready_ =
        std::make_unique<asio::posix::stream_descriptor>(s->io_, dup(s->local_->fd()));
    asio::post(s->io_, [s] { s->AcceptFrom(s->local_.get(), s->local_ready_.get()); });
  }
  s->loop_ = std::thread([s] { s->io_.run(); });
  s->started_ = true;
  return server;
}

TensorChannelServer::~TensorChannelServer() { Stop(); }

void TensorChannelServer::AcceptFrom(Listener* listener, asio::posix::stream_descriptor* ready) {
  if (stopping_) return;
  for (int i = 0; i < kAcceptBatch; ++i) {
    auto socket = listener->Accept();
    if (!socket.ok()) {
      // Out of descriptors, say: the connection stays queued; try again in
      // a moment rather than spin.
      LOG_EVERY_N(WARNING, 100) << socket.status().message();
      auto retry = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(100));
      retry->async_wait([this, listener, ready, retry](const boost::system::error_code& ec) {
        if (!ec) AcceptFrom(listener, ready);
      });
      return;
    }
    if (*socket == nullptr) {  // none left: wait for the next
      ready->async_wait(asio::posix::descriptor_base::wait_read,
                        [this, listener, ready](const boost::system::error_code& ec) {
                          if (!ec) AcceptFrom(listener, ready);
                        });
      return;
    }
    Admit(std::move(socket).value());
  }
  // More may be waiting: the connections already in get their turn first.
  asio::post(io_, [this, listener, ready] { AcceptFrom(listener, ready); });
}

void TensorChannelServer::Admit(std::unique_ptr<Socket> socket) {
  const std::string peer = socket->PeerKey();
  std::string refused;
  if (peers_[peer].connections >= limits_.max_per_peer && !EvictIdle(peer)) {
    refused =
        "all " + std::to_string(limits_.max_per_peer) + " connections from " + peer + " are busy";
  } else if (static_cast<int>(connections_.size()) >= limits_.max_connections && !EvictIdle("")) {
    refused = "all " + std::to_string(limits_.max_connections) + " connections are busy";
  }
  const int ready_fd = refused.empty() ? dup(socket->fd()) : -1;
  if (refused.empty() && ready_fd < 0) refused = "out of descriptors";
  if (!refused.empty()) {
    const Status status = ResourceExhausted("tensor channel refused a connection: " + refused)
                              .WithHint(Hint::kNotSent);
    LOG_EVERY_N(WARNING, 100) << status.message() << " (" << socket->PeerAddress() << ")";
    // Over TLS the client expects a handshake, not a frame: it just closes.
    if (tls_ == nullptr) WriteNow(socket.get(), status);
    if (peers_[peer].connections == 0) peers_.erase(peer);
    return;
  }
  auto c = std::make_shared<Connection>(io_, std::move(socket), ready_fd, &kept_replies_);
  c->peer = peer;
  // Shared memory comes only on the local socket, where its descriptor can
  // travel (never over TLS, which has no local socket).
  c->state.shared_memory = c->socket->local();
  c->state.budget = &shared_budget_;
  connections_.push_front(c);
  c->at = connections_.begin();
  ++peers_[peer].connections;
  ++connection_count_;
  c->idle_since = Clock::now();
  if (tls_ != nullptr) {  // the handshake on the loop, under the deadline
    CloseAt(c, c->idle_since + limits_.handshake, [limit = limits_.handshake] {
      return Unavailable("tensor channel closed a connection: no TLS handshake in " +
                         std::to_string(limit.count()) + " ms");
    });
    AwaitHandshake(c, /*write=*/false);
    return;
  }
  WriteNow(c->socket.get(), OkStatus());
  c->greeted = true;
  AwaitRequest(c, limits_.handshake);
}

void TensorChannelServer::AwaitHandshake(const ConnectionPtr& c, bool write) {
  // A read's edge may have come before this wait (see ReadableNow).
  if (!write && c->socket->ReadableNow()) {
    asio::post(io_, [this, c] {
      if (!c->closed) Handshake(c);
    });
    return;
  }
  c->ready.async_wait(
      write ? asio::posix::descriptor_base::wait_write : asio::posix::descriptor_base::wait_read,
      [this, c](const boost::system::error_code& ec) {
        if (ec || c->closed) return;
        Handshake(c);
      });
}

void TensorChannelServer::Handshake(const ConnectionPtr& c) {
  if (stopping_) return;
  if (c->tls == nullptr) {  // the client's first bytes: a handshake begins
    if (handshaking_.load() >= limits_.max_handshakes) DropIdlestHandshake();
    auto tls = TlsStream::BeginAccept(tls_.get(), c->socket.get());
    if (!tls.ok()) {
      LOG_EVERY_N(WARNING, 100) << "tensor channel: " << tls.status().message();
      Close(c);
      return;
    }
    c->tls = std::move(tls).value();
    c->handshaking = true;
    ++handshaking_;
  }
  c->progressed = Clock::now();
  auto progress = c->tls->Advance();
  if (!progress.ok()) {
    // Each of the first refusals, then one in a thousand: a client cannot
    // flood the log.
    static std::atomic<uint64_t> refusals{0};  // every server's loop
    const uint64_t n = refusals++;
    if (n < 100 || n % 1000 == 0) {
      LOG(WARNING) << "tensor channel: refused a connection from " << c->socket->PeerAddress()
                   << ": " << progress.status().message()
                   << (n < 100 ? "" : " (" + std::to_string(n + 1) + " so far)");
    }
    Close(c);
    return;
  }
  if (*progress != TlsStream::Progress::kDone) {
    AwaitHandshake(c, *progress == TlsStream::Progress::kWantWrite);
    return;
  }
  c->handshaking = false;
  --handshaking_;
  c->writer.Wrap(c->tls.get());
  // The Hello is a few bytes: the socket's buffer takes it at once.
  c->socket->SetDeadline(Clock::now());
  const Status hello = WriteFrame(c->tls.get(), FrameKind::kHello, nullptr);
  c->socket->SetDeadline(Clock::time_point::max());
  if (!hello.ok()) {
    Close(c);
    return;
  }
  c->greeted = true;
  VLOG(1) << "tensor channel: a TLS connection from " << c->tls->peer();
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      limits_.handshake - (Clock::now() - c->idle_since));
  AwaitRequest(c, std::max(left, std::chrono::milliseconds(0)));
}

void TensorChannelServer::DropIdlestHandshake() {
  ConnectionPtr idlest;
  for (const ConnectionPtr& c : connections_) {
    if (c->handshaking && (idlest == nullptr || c->progressed < idlest->progressed)) idlest = c;
  }
  if (idlest == nullptr) return;
  LOG_EVERY_N(WARNING, 100) << "tensor channel: dropped the TLS handshake of "
                            << idlest->socket->PeerAddress() << ": " << limits_.max_handshakes
                            << " under way";
  Close(idlest);
}

bool TensorChannelServer::EvictIdle(const std::string& peer) {
  ConnectionPtr chosen;
  for (const ConnectionPtr& c : connections_) {
    if (c->busy || c->gathering || (!peer.empty() && c->peer != peer)) continue;
    // One that never sent a request (the flood's) before a client's pooled
    // one; then the one idle longest.
    if (chosen == nullptr || (chosen->requested && !c->requested) ||
        (chosen->requested == c->requested && c->idle_since < chosen->idle_since)) {
      chosen = c;
    }
  }
  if (chosen == nullptr) return false;
  VLOG(1) << "tensor channel: closing an idle connection from " << chosen->socket->PeerAddress()
          << " for a new one";
  Close(chosen, Unavailable("tensor channel closed an idle connection: room for a new one")
                    .WithHint(Hint::kUnread));
  return true;
}

void TensorChannelServer::AwaitRequest(const ConnectionPtr& c, std::chrono::milliseconds limit) {
  c->idle_since = Clock::now();
  CloseAt(c, c->idle_since + limit, [requested = c->requested, limit] {
    return Unavailable(std::string("tensor channel closed an idle connection: ") +
                       (requested ? "idle for " : "no request in ") +
                       std::to_string(limit.count()) + " ms")
        .WithHint(Hint::kUnread);
  });
  if (c->ReadableNow()) {
    Gather(c);
  } else {
    WaitReadable(c);
  }
}

void TensorChannelServer::WaitReadable(const ConnectionPtr& c) {
  c->ready.async_wait(asio::posix::descriptor_base::wait_read,
                      [this, c](const boost::system::error_code& ec) {
                        if (ec || c->closed || c->busy) return;
                        Gather(c);
                      });
}

void TensorChannelServer::Gather(const ConnectionPtr& c) {
  auto gathered = c->reader.Gather(c->stream(), limits_.gather_bytes);
  Account(c);
  if (!gathered.ok() && !c->reader.pending()) {  // it hung up between requests
    Close(c);
    return;
  }
  if (gathered.ok() && *gathered == RequestReader::Gathered::kNothing) {  // no byte after all
    WaitReadable(c);
    return;
  }
  // A request whose client stopped sending midway (it may be waiting for
  // the refusal of what it sent) is served as it stands: its thread finds
  // where it breaks off, and refuses it whole.
  if (!gathered.ok() || *gathered == RequestReader::Gathered::kReady ||
      gathered_bytes_.load() >= static_cast<int64_t>(limits_.max_gathered_bytes)) {
    ++c->timer_armed;  // no deadline of the loop's now
    c->timer.cancel();
    Dispatch(c);
    return;
  }
  if (!c->gathering) {
    c->gathering = true;
    ++gathering_;
  }
  // A frame begun must be whole by its deadline; the next frame of a push
  // must begin within the idle limit.
  const RequestReader& r = c->reader;
  if (r.mid_frame()) {
    CloseAt(c, limits_.frames.DeadlineFor(r.frame_data_bytes(), r.frame_begun()),
            [bytes = r.frame_data_bytes()] {
              return DeadlineExceeded("tensor channel: a frame of " + std::to_string(bytes) +
                                      " bytes of data did not arrive within its deadline");
            });
  } else {
    CloseAt(c, Clock::now() + limits_.frames.idle, [idle = limits_.frames.idle] {
      return DeadlineExceeded("tensor channel: a push's next frame did not begin within " +
                              std::to_string(idle.count()) + " ms");
    });
  }
  WaitReadable(c);
}

void TensorChannelServer::CloseAt(const ConnectionPtr& c, Clock::time_point when,
                                  std::function<Status()> reason) {
  const uint64_t armed = ++c->timer_armed;
  c->timer.expires_at(when);
  c->timer.async_wait(
      [this, c, armed, reason = std::move(reason)](const boost::system::error_code& ec) {
        // A handler already queued when the timer was armed again, or
        // cancelled, does nothing.
        if (ec || armed != c->timer_armed || (c->busy && !c->sending) || c->closed) return;
        const Status why = reason();
        if (c->gathering || c->sending) {
          LOG_EVERY_N(WARNING, 20) << "tensor channel: closed the connection from "
                                   << c->socket->PeerAddress() << ": " << why.message();
        } else {
          VLOG(1) << "tensor channel: closing a connection from " << c->socket->PeerAddress()
                  << ": " << why.message();
        }
        Close(c, why);
      });
}

void TensorChannelServer::Account(const ConnectionPtr& c) {
  const size_t held = c->closed ? 0 : c->reader.held();
  gathered_bytes_ += static_cast<int64_t>(held) - static_cast<int64_t>(c->counted);
  c->counted = held;
}

void TensorChannelServer::Dispatch(const ConnectionPtr& c) {
  c->busy = true;
  if (c->gathering) {
    c->gathering = false;
    --gathering_;
  }
  Peer& peer = peers_[c->peer];
  if (peer.serving >= limits_.max_requests_per_peer) {
    peer.waiting.push_back(c);  // its turn comes when one of the peer's ends
    ++waiting_;
    return;
  }
  ++peer.serving;
  ++serving_;
  Submit(c);
}

void TensorChannelServer::Submit(const ConnectionPtr& c) {
  {
    MutexLock lock(&submitted_mu_);
    ++submitted_;
  }
  pool_->Submit([this, c] {
    Serve(c);
    MutexLock lock(&submitted_mu_);
    if (--submitted_ == 0) submitted_done_.notify_all();
  });
}

StatusOr<bool> TensorChannelServer::Park(const ConnectionPtr& c,
                                         const proto::PullRequest& request) {
  c->parked_pull = request;
  // The wait's end goes to the loop, which hands the pull back to the pool.
  PS_ASSIGN_OR_RETURN(const uint64_t id,
                      core_->AwaitPullable(request, std::chrono::system_clock::time_point::max(),
                                           [this, c](const Status& waited) {
                                             asio::post(io_,
                                                        [this, c, waited] { Unpark(c, waited); });
                                           }));
  c->wait_id = id;
  return id != 0;
}

void TensorChannelServer::WatchParked(const ConnectionPtr& c) {
  c->ready.async_wait(asio::posix::descriptor_base::wait_read,
                      [this, c](const boost::system::error_code& ec) {
                        if (ec || !c->parked || c->closed) return;
                        // An edge of bytes read already wakes this too.
                        if (!c->ReadableNow()) return WatchParked(c);
                        // The client sends nothing while it waits: what comes
                        // is its hanging up (its own deadline passed), which
                        // ends the wait.
                        Close(c);
                      });
}

void TensorChannelServer::Unpark(const ConnectionPtr& c, const Status& waited) {
  if (c->closed) return;
  c->waited = waited;
  c->wait_ended = true;
  if (!c->parked) return;  // still being served: Served dispatches it
  c->parked = false;
  c->ready.cancel();  // no longer watched for its client hanging up
  Dispatch(c);
}

void TensorChannelServer::Serve(const ConnectionPtr& c) {
  Status served;
  if (stopping_) {
    served = Aborted("the ps is stopping");
  } else if (c->wait_id != 0) {  // a parked pull whose wait is over
    served = ServeParkedPull(core_, c->stream(), &c->state, limits_.frames, c->parked_pull,
                             c->waited, [this] { return stopping_.load(); });
    c->wait_id = 0;
  } else {
    RequestReader::Stream request(&c->reader, c->stream());
    served = ServeTensorRequest(
        core_, &request, &c->state, limits_.frames, [this] { return stopping_.load(); },
        [this, c](const proto::PullRequest& request) { return Park(c, request); });
    if (!served.ok() && served.code() != Code::kUnavailable && !stopping_) {
      if (served.code() == Code::kDeadlineExceeded) {
        LOG_EVERY_N(WARNING, 20) << "tensor channel: closed the connection from "
                                 << c->socket->PeerAddress() << ": " << served.message();
      } else {
        VLOG(1) << "tensor channel connection closed: " << served.ToString();
      }
    }
  }
  asio::post(io_, [this, c, served] { Served(c, served); });
}

void TensorChannelServer::Served(const ConnectionPtr& c, const Status& served) {
  c->busy = false;
  --serving_;
  Peer& peer = peers_[c->peer];
  --peer.serving;
  // The peer's next waiting request takes the turn this one leaves.
  while (!peer.waiting.empty() && peer.serving < limits_.max_requests_per_peer) {
    ConnectionPtr next = std::move(peer.waiting.front());
    peer.waiting.pop_front();
    --waiting_;
    if (next->closed) continue;
    if (next->socket->PeerGone()) {
      // It gave up while it waited (its deadline passed): what it sent is
      // stale now (a push from its arena may have been overwritten since).
      next->busy = false;
      Close(next);
      continue;
    }
    ++peer.serving;
    ++serving_;
    Submit(next);
  }
  if (c->closed) {
    if (peer.connections == 0 && peer.serving == 0) peers_.erase(c->peer);
    if (c->wait_id != 0 && !c->wait_ended) core_->CancelPullWait(c->wait_id);
    return;
  }
  if (c->writer.kept() > 0) {
    c->busy = true;  // answering
    c->sending = true;
    ++sending_;
    CloseAt(c, limits_.frames.DeadlineFor(c->writer.kept()), [bytes = c->writer.kept()] {
      return DeadlineExceeded("tensor channel: the last " + std::to_string(bytes) +
                              " bytes of a reply were not read within their deadline");
    });
    SendReply(c, served);
    return;
  }
  Answered(c, served);
}

void TensorChannelServer::SendReply(const ConnectionPtr& c, const Status& served) {
  auto sent = c->writer.SendKept();
  if (sent.ok() && !*sent) {  // the rest once the client has read more
    c->ready.async_wait(asio::posix::descriptor_base::wait_write,
                        [this, c, served](const boost::system::error_code& ec) {
                          if (ec || c->closed) return;
                          SendReply(c, served);
                        });
    return;
  }
  c->busy = false;
  c->sending = false;
  --sending_;
  ++c->timer_armed;  // the reply's deadline is over
  c->timer.cancel();
  if (!sent.ok()) {  // the client hung up
    VLOG(1) << "tensor channel: a reply was cut short: " << sent.status().ToString();
    Close(c);
    return;
  }
  Answered(c, served);
}

void TensorChannelServer::Answered(const ConnectionPtr& c, const Status& served) {
  c->reader.Served();
  Account(c);
  if (!served.ok() || stopping_) {
    // A pull it parked as the ps began to stop waits no more.
    if (c->wait_id != 0 && !c->wait_ended) core_->CancelPullWait(c->wait_id);
    Close(c);
    return;
  }
  if (c->wait_id != 0) {  // it parked a pull
    c->busy = true;       // not idle: its client waits for the reply
    if (c->wait_ended) {
      Dispatch(c);
      return;
    }
    c->parked = true;
    WatchParked(c);
    return;
  }
  c->requested = true;
  c->wait_ended = false;
  AwaitRequest(c, limits_.idle);
}

void TensorChannelServer::Close(const ConnectionPtr& c, const Status& why) {
  if (c->closed) return;
  c->closed = true;
  c->timer.cancel();
  boost::system::error_code ignored;
  c->ready.close(ignored);
  if (c->gathering) {
    c->gathering = false;
    --gathering_;
  }
  if (c->handshaking) {
    c->handshaking = false;
    --handshaking_;
  }
  // A client not being answered hears why: its request, if one crossed
  // this or was being gathered, was not served (over TLS the socket is the
  // TLS layer's: it just closes).
  if (!why.ok() && !c->busy && c->tls == nullptr && c->greeted) WriteNow(c->socket.get(), why);
  // A request being served ends now; its thread still holds c (and its
  // shared memory, given back when c goes).
  c->socket->Shutdown();
  // A parked pull's wait ends now (one being served ends it in Served).
  if (c->parked) core_->CancelPullWait(c->wait_id);
  if (c->sending) {  // what its reply has left goes unsent: no thread holds c
    c->sending = false;
    c->busy = false;
    --sending_;
    c->writer.Drop();
  }
  if (!c->busy || c->parked) c->state.Release();
  Account(c);  // its reader's bytes go with it
  connections_.erase(c->at);
  Peer& peer = peers_[c->peer];
  --peer.connections;
  if (peer.connections == 0 && peer.serving == 0) peers_.erase(c->peer);
  --connection_count_;
}

void TensorChannelServer::Stop() {
  if (stopping_.exchange(true) || !started_) return;
  // Everything closes on the loop, which then ends: nothing is handed to
  // the pool after that.
  asio::post(io_, [this] {
    boost::system::error_code ignored;
    if (tcp_ready_ != nullptr) tcp_ready_->close(ignored);
    if (local_ready_ != nullptr) local_ready_->close(ignored);
    const std::vector<ConnectionPtr> open(connections_.begin(), connections_.end());
    for (const ConnectionPtr& c : open) Close(c);
    work_.reset();
    io_.stop();
  });
  loop_.join();
  // Requests being served end: their sockets are shut down, a pull waiting
  // for a step asks stopping_, and one not begun is not served.
  {
    MutexLock lock(&submitted_mu_);
    submitted_done_.wait(*lock.native(), [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(submitted_mu_) {
      return submitted_ == 0;
    });
  }
  // What they handed the loop since (Served: a pull parked by a request
  // being served as its connection closed ends its wait there) runs here,
  // so no wait outlives the server.
  io_.restart();
  io_.poll();
}

TensorChannelServer::Counts TensorChannelServer::counts() const {
  Counts counts;
  counts.connections = connection_count_.load();
  counts.serving = serving_.load();
  counts.waiting = waiting_.load();
  counts.sending = sending_.load();
  counts.kept_reply_bytes = kept_replies_.used();
  counts.gathering = gathering_.load();
  counts.handshaking = handshaking_.load();
  counts.threads = pool_->threads();
  return counts;
}

}  // namespace tcp
}  // namespace pstrain
