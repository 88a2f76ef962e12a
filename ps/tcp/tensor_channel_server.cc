#include "ps/tcp/tensor_channel_server.h"

#include <glog/logging.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <utility>
#include <vector>

#include "ps/tcp/tls_stream.h"

namespace pstrain {
namespace tcp {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

namespace {

// Connections taken from a listener before the loop turns to other work.
constexpr int kAcceptBatch = 64;
// How long a request thread waits for more work before it ends.
constexpr std::chrono::seconds kKeepIdleThread{10};

}  // namespace

struct TensorChannelServer::Connection {
  Connection(asio::io_context& io, std::unique_ptr<Socket> s, int ready_fd)
      : socket(std::move(s)), ready(io, ready_fd), timer(io) {}
  ByteStream* stream() {
    return tls != nullptr ? static_cast<ByteStream*>(tls.get()) : socket.get();
  }
  // Whether the next request's first byte is already here (or the peer
  // hung up): asio's epoll waits for the next edge only, and this one may
  // have come while the connection was busy.
  bool ReadableNow() const { return (tls != nullptr && tls->pending()) || socket->ReadableNow(); }

  // Used by the serving thread while busy, else by the loop.
  std::unique_ptr<Socket> socket;
  std::unique_ptr<TlsStream> tls;  // after the handshake, with TLS
  ChannelConnection state;
  // Loop thread only.
  asio::posix::stream_descriptor ready;  // a duplicate of the socket's descriptor
  asio::steady_timer timer;              // the handshake or idle limit
  std::string peer;                      // Socket::PeerKey
  Clock::time_point idle_since;
  bool busy = false;
  bool closed = false;
  bool requested = false;  // has sent a request (or, with TLS, completed its handshake)
  std::list<ConnectionPtr>::iterator at;
};

TensorChannelServer::TensorChannelServer(PsCore* core, const ChannelLimits& limits,
                                         std::shared_ptr<SSL_CTX> tls)
    : core_(core),
      limits_(limits),
      tls_(std::move(tls)),
      pool_(std::make_unique<ThreadPool>(limits.max_requests, kKeepIdleThread)),
      work_(asio::make_work_guard(io_)) {}

StatusOr<std::unique_ptr<TensorChannelServer>> TensorChannelServer::Start(
    PsCore* core, const std::string& host, int port, const ChannelLimits& limits,
    std::shared_ptr<SSL_CTX> tls) {
  std::unique_ptr<TensorChannelServer> server(
      new TensorChannelServer(core, limits, std::move(tls)));
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
  if (per_peer_[peer] >= limits_.max_per_peer && !EvictIdlest(peer)) {
    refused =
        "all " + std::to_string(limits_.max_per_peer) + " connections from " + peer + " are busy";
  } else if (static_cast<int>(connections_.size()) >= limits_.max_connections && !EvictIdlest("")) {
    refused = "all " + std::to_string(limits_.max_connections) + " connections are busy";
  }
  const int ready_fd = refused.empty() ? dup(socket->fd()) : -1;
  if (refused.empty() && ready_fd < 0) refused = "out of descriptors";
  if (!refused.empty()) {
    const Status status = ResourceExhausted("tensor channel refused a connection: " + refused);
    LOG_EVERY_N(WARNING, 100) << status.message() << " (" << socket->PeerAddress() << ")";
    // Never blocks the loop: the frame fits in the socket's empty buffer,
    // or is dropped.
    socket->SetDeadline(Clock::now());
    (void)WriteError(socket.get(), status);
    if (per_peer_[peer] == 0) per_peer_.erase(peer);
    return;
  }
  auto c = std::make_shared<Connection>(io_, std::move(socket), ready_fd);
  c->peer = peer;
  // Shared memory comes only on the local socket, where its descriptor can
  // travel (never over TLS, which has no local socket).
  c->state.shared_memory = c->socket->local();
  connections_.push_front(c);
  c->at = connections_.begin();
  ++per_peer_[peer];
  ++connection_count_;
  if (tls_ != nullptr) {  // the handshake on a request thread, under its deadline
    c->busy = true;
    ++serving_;
    pool_->Submit([this, c] { Serve(c); });
    return;
  }
  AwaitRequest(c, limits_.handshake);
}

bool TensorChannelServer::EvictIdlest(const std::string& peer) {
  ConnectionPtr idlest;
  for (const ConnectionPtr& c : connections_) {
    if (c->busy || (!peer.empty() && c->peer != peer)) continue;
    if (idlest == nullptr || c->idle_since < idlest->idle_since) idlest = c;
  }
  if (idlest == nullptr) return false;
  VLOG(1) << "tensor channel: closing the connection idle longest, from "
          << idlest->socket->PeerAddress() << ", for a new one";
  Close(idlest);
  return true;
}

void TensorChannelServer::AwaitRequest(const ConnectionPtr& c, std::chrono::milliseconds limit) {
  c->idle_since = Clock::now();
  const auto dispatch = [this, c] {
    c->busy = true;
    ++serving_;
    pool_->Submit([this, c] { Serve(c); });
  };
  if (c->ReadableNow()) {
    dispatch();
    return;
  }
  c->timer.expires_after(limit);
  c->timer.async_wait([this, c, limit](const boost::system::error_code& ec) {
    if (ec || c->busy || c->closed) return;
    VLOG(1) << "tensor channel: closing a connection from " << c->socket->PeerAddress()
            << (c->requested ? " idle for " : " that sent no request in ")
            << std::chrono::duration_cast<std::chrono::seconds>(limit).count() << " s";
    Close(c);
  });
  c->ready.async_wait(asio::posix::descriptor_base::wait_read,
                      [c, dispatch](const boost::system::error_code& ec) {
                        if (ec || c->closed) return;
                        c->timer.cancel();
                        dispatch();
                      });
}

void TensorChannelServer::Serve(const ConnectionPtr& c) {
  Status served;
  if (tls_ != nullptr && c->tls == nullptr) {
    c->socket->SetDeadline(Clock::now() + limits_.handshake);
    auto tls = TlsStream::Accept(tls_.get(), c->socket.get());
    c->socket->SetDeadline(Clock::time_point::max());
    if (tls.ok()) {
      c->tls = std::move(tls).value();
      VLOG(1) << "tensor channel: a TLS connection from " << c->tls->peer();
    } else {
      if (!stopping_) {
        LOG(WARNING) << "tensor channel: refused a connection from " << c->socket->PeerAddress()
                     << ": " << tls.status().message();
      }
      served = tls.status();
    }
  } else {
    served = ServeTensorRequest(core_, c->stream(), &c->state, limits_.frames,
                                [this] { return stopping_.load(); });
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
  if (c->closed) return;
  if (!served.ok() || stopping_) {
    Close(c);
    return;
  }
  const bool first = !c->requested;
  c->requested = true;
  AwaitRequest(c, first && tls_ != nullptr ? limits_.handshake : limits_.idle);
}

void TensorChannelServer::Close(const ConnectionPtr& c) {
  if (c->closed) return;
  c->closed = true;
  c->timer.cancel();
  boost::system::error_code ignored;
  c->ready.close(ignored);
  // A request being served ends now; its thread still holds c.
  c->socket->Shutdown();
  connections_.erase(c->at);
  if (--per_peer_[c->peer] == 0) per_peer_.erase(c->peer);
  --connection_count_;
}

void TensorChannelServer::Stop() {
  if (stopping_.exchange(true)) return;
  asio::post(io_, [this] {
    boost::system::error_code ignored;
    if (tcp_ready_ != nullptr) tcp_ready_->close(ignored);
    if (local_ready_ != nullptr) local_ready_->close(ignored);
    const std::vector<ConnectionPtr> open(connections_.begin(), connections_.end());
    for (const ConnectionPtr& c : open) Close(c);
  });
  // Requests being served end: their sockets are shut down, and a pull
  // waiting for a step asks stopping_.
  pool_->Shutdown();
  work_.reset();
  io_.stop();
  loop_.join();
}

TensorChannelServer::Counts TensorChannelServer::counts() const {
  Counts counts;
  counts.connections = connection_count_.load();
  counts.serving = serving_.load();
  counts.threads = pool_->threads();
  return counts;
}

}  // namespace tcp
}  // namespace pstrain
