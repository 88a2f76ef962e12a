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
// The control calls, which never block, are answered on gRPC's callback
// threads; Init, Pull, Push and the row calls, which block, run on the
// ps's request threads. A client stream holds none while its messages
// come: they are gathered first (ps/rpc/gathering_reader.h), and one idle
// past its limit is cancelled. A pull waiting for its
// sync step holds no thread (PsCore::AwaitPullable) until its answer is
// written. The core's shutdown callback runs on the thread of
// the Shutdown RPC; it must not block on the server (the main thread stops
// the server).
#ifndef PSTRAIN_PS_RPC_PS_SERVICE_H_
#define PSTRAIN_PS_RPC_PS_SERVICE_H_

#include <chrono>
#include <functional>
#include <string>

#include "core/thread_pool.h"
#include "proto/ps.grpc.pb.h"
#include "ps/ps_core.h"
#include "ps/rpc/gathering_reader.h"

namespace pstrain {

// Every call goes through gRPC's callback API (no thread of gRPC's waits
// for one) and takes its request raw (the generated WithRawCallbackMethod_
// bases): the service parses it, so a request that is not a message of its
// type is refused INVALID_ARGUMENT, as a malformed one is, where gRPC's own
// parsing would answer INTERNAL. ExportRows and ImportRows, which the
// chief's checkpoints stream, take typed messages.
using PsServiceBase = proto::Ps::WithRawCallbackMethod_Init<proto::Ps::WithRawCallbackMethod_Pull<
    proto::Ps::WithRawCallbackMethod_Push<proto::Ps::WithRawCallbackMethod_GetStatus<
        proto::Ps::WithRawCallbackMethod_WorkerDone<proto::Ps::WithRawCallbackMethod_SetLiveWorkers<
            proto::Ps::WithRawCallbackMethod_Heartbeat<proto::Ps::WithRawCallbackMethod_EndTraining<
                proto::Ps::WithRawCallbackMethod_Shutdown<proto::Ps::WithCallbackMethod_ExportRows<
                    proto::Ps::WithCallbackMethod_ImportRows<proto::Ps::Service>>>>>>>>>>>;

class PsService final : public PsServiceBase {
 public:
  // Borrows core and requests, which must outlive the service. Init, Push
  // and the answer of a Pull run on `requests` (shared with the tensor
  // channel): its threads bound what concurrent requests can make the ps
  // hold (each push at most one copy of its variables); calls past them
  // wait their turn. A pull waiting for its step holds none of them, nor
  // does a client stream while its messages come (`streams` bounds what
  // they hold).
  PsService(PsCore* core, ThreadPool* requests, const StreamLimits& streams = {});
  ~PsService() override;

  // The client streams being gathered, for tests and logs.
  const StreamWatch& streams() const { return streams_; }

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
  // the client went away); waits at most until `deadline` (on this thread,
  // when the step is not there yet), and ends when cancelled() says so.
  grpc::Status ServePull(const proto::PullRequest& request,
                         std::chrono::system_clock::time_point deadline,
                         const std::function<bool()>& cancelled,
                         const std::function<bool(const grpc::ByteBuffer&)>& write);
  grpc::ServerUnaryReactor* GetStatus(grpc::CallbackServerContext* ctx,
                                      const grpc::ByteBuffer* request,
                                      grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* WorkerDone(grpc::CallbackServerContext* ctx,
                                       const grpc::ByteBuffer* request,
                                       grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* SetLiveWorkers(grpc::CallbackServerContext* ctx,
                                           const grpc::ByteBuffer* request,
                                           grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* Heartbeat(grpc::CallbackServerContext* ctx,
                                      const grpc::ByteBuffer* request,
                                      grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* EndTraining(grpc::CallbackServerContext* ctx,
                                        const grpc::ByteBuffer* request,
                                        grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* Shutdown(grpc::CallbackServerContext* ctx,
                                     const grpc::ByteBuffer* request,
                                     grpc::ByteBuffer* response) override;
  // Embedding rows out and in, in blocks (checkpoints and restores), on the
  // request threads.
  grpc::ServerWriteReactor<proto::ExportRowsResponse>* ExportRows(
      grpc::CallbackServerContext* ctx, const proto::ExportRowsRequest* request) override;
  grpc::ServerReadReactor<proto::ImportRowsRequest>* ImportRows(
      grpc::CallbackServerContext* ctx, proto::ImportRowsResponse* response) override;

 private:
  PsCore* const core_;
  ThreadPool* const requests_;
  StreamWatch streams_;
  int tensor_port_ = 0;
  std::string tensor_socket_;
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_RPC_PS_SERVICE_H_
