// PsServer: the transports one ps task serves its PsCore (ps/ps_core.h) on,
// and their lifecycle (STARTED -> STOPPED): gRPC (ps/rpc/ps_service.h) for
// every call, and the tensor channel (ps/tcp/tensor_channel_server.h) for
// Push and Pull. Both hand each request to the same transport-neutral core;
// the server holds no logic of its own.
//
// Stop may be called from any thread except a transport's handler, and is
// idempotent. A Shutdown RPC does not stop the server itself: the core's
// shutdown callback tells the owner (main), which calls Stop.
#ifndef PSTRAIN_PS_SERVER_PS_SERVER_H_
#define PSTRAIN_PS_SERVER_PS_SERVER_H_

#include <memory>
#include <mutex>
#include <string>

#include "core/mutex.h"
#include "core/status.h"
#include "core/thread_pool.h"
#include "ps/ps_core.h"

namespace grpc {
class Server;
}  // namespace grpc

namespace pstrain {

class PsService;
namespace tcp {
struct ChannelLimits;
class TensorChannelServer;
}  // namespace tcp

class PsServer {
 public:
  // Serves `core` (borrowed; it must outlive the server) over gRPC on
  // listen_address ("0.0.0.0:2222"; port 0 picks a free port), and over the
  // tensor channel on tensor_port of the same host (0: a free port, -1:
  // none, tensors go over gRPC). `channel` bounds what the tensor channel's
  // clients may hold (null: the defaults). Both transports serve their
  // tensor requests (Init, Push, and a Pull's answer) on the same
  // `request_threads` threads; requests past them wait their turn, and a
  // pull waiting for its sync step holds none. Unavailable when a port
  // cannot be bound.
  static StatusOr<std::unique_ptr<PsServer>> Start(PsCore* core, const std::string& listen_address,
                                                   int tensor_port = 0,
                                                   const tcp::ChannelLimits* channel = nullptr,
                                                   int request_threads = kRequestThreads);
  static constexpr int kRequestThreads = 32;
  ~PsServer();

  int port() const { return port_; }
  // The tensor channel's port; 0 when there is none.
  int tensor_port() const;
  // Pulls waiting for a step now, over any transport.
  int waiting_pulls() const { return core_->waiting_pulls(); }
  // gRPC's face of the core, for its counts.
  const PsService& service() const { return *service_; }
  // The tensor channel, for its counts; null when there is none.
  const tcp::TensorChannelServer* channel() const { return channel_.get(); }
  uint64_t incarnation() const { return core_->incarnation(); }

  // Drains in-flight calls (cancelling those still running after 1 s) and
  // stops serving.
  void Stop();

 private:
  PsServer(PsCore* core, int request_threads);

  PsCore* const core_;
  // Both transports' tensor requests; outlives them (declared first).
  std::unique_ptr<ThreadPool> requests_;
  int port_ = 0;
  std::unique_ptr<PsService> service_;  // gRPC's face of core_
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<tcp::TensorChannelServer> channel_;  // Push and Pull off gRPC

  Mutex mu_;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_SERVER_PS_SERVER_H_
