// PsService: the gRPC face of one ps task. Translates the Ps protocol
// (proto/ps.proto) into PsCore calls (ps/ps_core.h); holds no logic of its
// own.
//
// Every request is read and checked whole before it changes anything, and
// every size it implies is checked before anything is allocated: the
// streams of Init and Push are parsed here, message by message
// (ps/rpc/unparsed_stream.h), so a stream that ends in garbage is refused
// like one cut short, and their tensors are assembled under the core's
// limits; a refusal is a gRPC error that names the problem. Tensors move
// without protobuf copies (ps/rpc/chunk_codec.h).
//
// The control calls run on gRPC's threads; Init, Pull and Push, which block,
// on the service's own (ps/rpc/blocking_reactors.h), through gRPC's callback
// API with raw messages. The core's shutdown callback runs on the thread of
// the Shutdown RPC; it must not block on the server (the main thread stops
// the server).
#ifndef PSTRAIN_PS_RPC_PS_SERVICE_H_
#define PSTRAIN_PS_RPC_PS_SERVICE_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <string>

#include "core/thread_pool.h"
#include "proto/ps.grpc.pb.h"
#include "ps/ps_core.h"

namespace pstrain {

// Init, Pull and Push take raw messages through the callback API (the
// generated WithRawCallbackMethod_ bases); the rest are ordinary handlers.
using PsServiceBase = proto::Ps::WithRawCallbackMethod_Init<proto::Ps::WithRawCallbackMethod_Pull<
    proto::Ps::WithRawCallbackMethod_Push<proto::Ps::Service>>>;

class PsService final : public PsServiceBase {
 public:
  // Borrows core, which must outlive the service.
  explicit PsService(PsCore* core);

  // Tensor calls served at once, a thread each: bounds what concurrent
  // requests can make the ps hold (each push at most one copy of its
  // variables). Past it a call is refused with RESOURCE_EXHAUSTED.
  static constexpr int kMaxTensorCalls = 256;

  // Where the ps's tensor channel listens, which GetStatus reports. Call
  // before the service serves.
  void set_tensor_channel(int port, std::string local_socket) {
    tensor_port_ = port;
    tensor_socket_ = std::move(local_socket);
  }

  grpc::ServerReadReactor<grpc::ByteBuffer>* Init(grpc::CallbackServerContext* ctx,
                                                  grpc::ByteBuffer* response) override;
  grpc::ServerReadReactor<grpc::ByteBuffer>* Push(grpc::CallbackServerContext* ctx,
                                                  grpc::ByteBuffer* response) override;
  // The reply's chunks, their data straight from the pulled tensors.
  grpc::ServerWriteReactor<grpc::ByteBuffer>* Pull(grpc::CallbackServerContext* ctx,
                                                   const grpc::ByteBuffer* request) override;
  // The reply to one PullRequest, each message handed to `write` (false:
  // the client went away); waits at most until `deadline`, and ends when
  // cancelled() says so.
  grpc::Status ServePull(const proto::PullRequest& request,
                         std::chrono::system_clock::time_point deadline,
                         const std::function<bool()>& cancelled,
                         const std::function<bool(const grpc::ByteBuffer&)>& write);
  grpc::Status GetStatus(grpc::ServerContext* ctx, const proto::StatusRequest* request,
                         proto::StatusResponse* response) override;
  grpc::Status WorkerDone(grpc::ServerContext* ctx, const proto::WorkerDoneRequest* request,
                          proto::WorkerDoneResponse* response) override;
  grpc::Status SetLiveWorkers(grpc::ServerContext* ctx, const proto::SetLiveWorkersRequest* request,
                              proto::SetLiveWorkersResponse* response) override;
  grpc::Status Heartbeat(grpc::ServerContext* ctx, const proto::HeartbeatRequest* request,
                         proto::HeartbeatResponse* response) override;
  grpc::Status EndTraining(grpc::ServerContext* ctx, const proto::EndTrainingRequest* request,
                           proto::EndTrainingResponse* response) override;
  grpc::Status Shutdown(grpc::ServerContext* ctx, const proto::ShutdownRequest* request,
                        proto::ShutdownResponse* response) override;
  // Embedding rows out and in, in blocks (checkpoints and restores).
  grpc::Status ExportRows(grpc::ServerContext* ctx, const proto::ExportRowsRequest* request,
                          grpc::ServerWriter<proto::ExportRowsResponse>* writer) override;
  grpc::Status ImportRows(grpc::ServerContext* ctx,
                          grpc::ServerReader<proto::ImportRowsRequest>* reader,
                          proto::ImportRowsResponse* response) override;

 private:
  // Serves a tensor call with `handler` on the service's threads, counted
  // against kMaxTensorCalls; past that, a reactor that refuses the call.
  template <typename Reactor>
  Reactor* StartTensorCall(std::function<grpc::Status(Reactor*)> handler);

  ThreadPool tensor_threads_{kMaxTensorCalls, std::chrono::seconds(10)};
  std::atomic<int> tensor_calls_{0};
  PsCore* const core_;
  int tensor_port_ = 0;
  std::string tensor_socket_;
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_RPC_PS_SERVICE_H_
