// PsServer: one ps task's gRPC server and its lifecycle (STARTED -> STOPPED).
//
// Stop may be called from any thread except a gRPC handler, and is
// idempotent. A Shutdown RPC does not stop the server itself: it notifies the
// StopNotice, and the owner (main) calls Stop.
#ifndef PSTRAIN_PS_PS_SERVER_H_
#define PSTRAIN_PS_PS_SERVER_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <mutex>
#include <string>

#include "core/status.h"
#include "core/stop_signals.h"
#include "ps/rpc/ps_service.h"
#include "ps/tcp/tensor_channel_server.h"
#include "ps/variable_store.h"

namespace pstrain {

class PsServer {
 public:
  // Listens on listen_address ("0.0.0.0:2222"; port 0 picks a free port)
  // for gRPC, and on tensor_port of the same host for the tensor channel
  // (ps/tcp/; 0: a free port, -1: none, tensors go over gRPC). Unavailable
  // when a port cannot be bound. The store holds at most max_bytes
  // (variables, slots and shadows); requests that would take it past that
  // are refused. `channel` bounds what the tensor channel's clients may hold.
  // Borrows shutdown_requested, which must outlive the server.
  static StatusOr<std::unique_ptr<PsServer>> Start(const std::string& listen_address,
                                                   int task_index,
                                                   StopNotice* shutdown_requested,
                                                   uint64_t max_bytes = UINT64_MAX,
                                                   int tensor_port = 0,
                                                   const tcp::ChannelLimits& channel = {});
  // gRPC threads serving calls at once: bounds what concurrent requests can
  // make the ps hold (each push at most one copy of its variables).
  static constexpr int kMaxThreads = 256;
  ~PsServer();

  int port() const { return port_; }
  // The tensor channel's port; 0 when there is none.
  int tensor_port() const { return channel_ == nullptr ? 0 : channel_->port(); }
  // Pulls waiting for a step now, over any transport.
  int waiting_pulls() const { return core_->waiting_pulls(); }
  // The tensor channel, for its counts; null when there is none.
  const tcp::TensorChannelServer* channel() const { return channel_.get(); }
  uint64_t incarnation() const { return incarnation_; }

  // Drains in-flight calls (cancelling those still running after 1 s) and
  // stops serving.
  void Stop();

 private:
  PsServer(uint64_t incarnation, uint64_t max_bytes);

  const uint64_t incarnation_;
  int port_ = 0;
  VariableStore store_;
  std::unique_ptr<PsCore> core_;        // the logic, over store_
  std::unique_ptr<PsService> service_;  // gRPC's face of core_
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<tcp::TensorChannelServer> channel_;  // Push and Pull off gRPC

  std::mutex mu_;
  bool stopped_ = false;  // guarded by mu_
};

// Server options shared by every pstrain gRPC server and channel: tensors are
// chunked, but a generous limit keeps headers and status replies unbounded.
void ConfigureMessageSizes(grpc::ServerBuilder* builder);
grpc::ChannelArguments DefaultChannelArguments();

}  // namespace pstrain

#endif  // PSTRAIN_PS_PS_SERVER_H_
