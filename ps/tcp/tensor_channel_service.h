// The ps's side of the tensor channel (ps/tcp/tensor_frames.h): Push and
// Pull requests read from a byte stream and served by a PsCore through the
// same stream handling and checks as gRPC's (ps/tensor_streams.h), and
// TensorChannelServer, which serves every connection to a port this way.
#ifndef PSTRAIN_PS_TCP_TENSOR_CHANNEL_SERVICE_H_
#define PSTRAIN_PS_TCP_TENSOR_CHANNEL_SERVICE_H_

#include <atomic>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/status.h"
#include "ps/ps_core.h"
#include "ps/tcp/socket.h"
#include "ps/tcp/tensor_frames.h"
#include "ps/tcp/tls_stream.h"

namespace pstrain {
namespace tcp {

// Serves one connection's requests, one after the other, until it ends
// (OkStatus) or a request fails: then the error goes back in an Error frame
// and is returned, and the caller closes the connection. A pull waiting for
// a step gives up when `stopping` says so. shared_memory: map the regions a
// client offers (not over TLS, where tensors travel encrypted).
Status ServeTensorConnection(PsCore* core, ByteStream* stream,
                             const std::function<bool()>& stopping, bool shared_memory = true);

class TensorChannelServer {
 public:
  // Listens on host:port (port 0: a free one); each connection gets a
  // thread, up to max_connections at once (more are refused). tls: every
  // connection must complete a TLS handshake with this server context
  // (core/tls.h) first; one that does not is closed and logged.
  static StatusOr<std::unique_ptr<TensorChannelServer>> Start(
      PsCore* core, const std::string& host, int port, int max_connections,
      std::shared_ptr<SSL_CTX> tls = nullptr);
  ~TensorChannelServer();

  int port() const { return listener_->port(); }
  // Stops accepting, breaks every connection and waits for their threads.
  void Stop();

 private:
  struct Connection {
    std::unique_ptr<Socket> socket;
    std::thread thread;
    std::atomic<bool> done{false};
  };
  TensorChannelServer(PsCore* core, std::unique_ptr<Listener> listener, int max_connections,
                      std::shared_ptr<SSL_CTX> tls)
      : core_(core), listener_(std::move(listener)), max_connections_(max_connections),
        tls_(std::move(tls)) {}
  // One connection's life: the handshake (with TLS), then its requests.
  Status Serve(Socket* socket);
  void AcceptLoop();
  // Joins the threads of connections that have ended. Needs mu_.
  void ReapLocked();

  PsCore* const core_;
  const std::unique_ptr<Listener> listener_;
  const int max_connections_;
  const std::shared_ptr<SSL_CTX> tls_;  // null: plain TCP
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  std::mutex mu_;
  std::list<Connection> connections_;  // guarded by mu_
};

}  // namespace tcp
}  // namespace pstrain

#endif  // PSTRAIN_PS_TCP_TENSOR_CHANNEL_SERVICE_H_
