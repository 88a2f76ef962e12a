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

namespace pstrain {
namespace tcp {

// Serves one connection's requests, one after the other, until it ends
// (OkStatus) or a request fails: then the error goes back in an Error frame
// and is returned, and the caller closes the connection. A pull waiting for
// a step gives up when `stopping` says so.
Status ServeTensorConnection(PsCore* core, ByteStream* stream,
                             const std::function<bool()>& stopping);

class TensorChannelServer {
 public:
  // Listens on host:port (port 0: a free one); each connection gets a
  // thread, up to max_connections at once (more are refused).
  static StatusOr<std::unique_ptr<TensorChannelServer>> Start(PsCore* core,
                                                              const std::string& host, int port,
                                                              int max_connections);
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
  TensorChannelServer(PsCore* core, std::unique_ptr<Listener> listener, int max_connections)
      : core_(core), listener_(std::move(listener)), max_connections_(max_connections) {}
  void AcceptLoop();
  // Joins the threads of connections that have ended. Needs mu_.
  void ReapLocked();

  PsCore* const core_;
  const std::unique_ptr<Listener> listener_;
  const int max_connections_;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  std::mutex mu_;
  std::list<Connection> connections_;  // guarded by mu_
};

}  // namespace tcp
}  // namespace pstrain

#endif  // PSTRAIN_PS_TCP_TENSOR_CHANNEL_SERVICE_H_
