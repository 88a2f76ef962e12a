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
// Handlers run on gRPC's threads, concurrently. The core's shutdown callback
// runs on the thread of the Shutdown RPC; it must not block on the server
// (the main thread stops the server).
#ifndef PSTRAIN_PS_RPC_PS_SERVICE_H_
#define PSTRAIN_PS_RPC_PS_SERVICE_H_

#include <atomic>

#include "proto/ps.grpc.pb.h"
#include "ps/ps_core.h"

namespace pstrain {

class PsService final : public proto::Ps::Service {
 public:
  // Borrows core, which must outlive the service.
  explicit PsService(PsCore* core);

  // Where the ps's tensor channel listens, which GetStatus reports. Call
  // before the service serves.
  void set_tensor_channel(int port, std::string local_socket) {
    tensor_port_ = port;
    tensor_socket_ = std::move(local_socket);
  }

  // Init and Push, registered with unparsed messages in place of the
  // generated handlers.
  grpc::Status InitStream(grpc::ServerContext* ctx, grpc::ServerReader<grpc::ByteBuffer>* reader,
                          proto::InitResponse* response);
  grpc::Status PushStream(grpc::ServerContext* ctx, grpc::ServerReader<grpc::ByteBuffer>* reader,
                          proto::PushResponse* response);
  // Pull, registered to write its reply unparsed, its chunks' data straight
  // from the pulled tensors.
  grpc::Status PullStream(grpc::ServerContext* ctx,
                          grpc::ServerReaderWriter<grpc::ByteBuffer, proto::PullRequest>* stream);
  // The reply to one PullRequest, written to `writer`.
  grpc::Status Pull(grpc::ServerContext* ctx, const proto::PullRequest& request,
                    grpc::internal::WriterInterface<grpc::ByteBuffer>* writer);
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

 private:
  template <typename Response>
  using UnparsedHandler = grpc::Status (PsService::*)(grpc::ServerContext*,
                                                      grpc::ServerReader<grpc::ByteBuffer>*,
                                                      Response*);
  // Serves client-streaming `method` (its index in proto/ps.proto's service)
  // with `handler`, which gets the stream's messages unparsed.
  template <typename Response>
  void ReadUnparsed(int method, UnparsedHandler<Response> handler);

  PsCore* const core_;
  int tensor_port_ = 0;
  std::string tensor_socket_;
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_RPC_PS_SERVICE_H_
