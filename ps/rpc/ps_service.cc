#include "ps/rpc/ps_service.h"

#include <glog/logging.h>

#include <algorithm>
#include <functional>
#include <utility>

#include "ps/rpc/borrowed_slices.h"
#include "ps/rpc/chunk_codec.h"
#include "ps/rpc/grpc_status.h"
#include "ps/rpc/unparsed_stream.h"
#include "ps/tensor_chunks.h"
#include "ps/tensor_streams.h"

namespace pstrain {

namespace {

// Method indices in the order of proto/ps.proto's `service Ps`.
constexpr int kInitMethod = 0;
constexpr int kPullMethod = 1;
constexpr int kPushMethod = 2;

// Pull chunks: the client may choose their size within these bounds (tiny
// chunks would only make the ps send millions of messages).
constexpr uint32_t kMinChunkBytes = 4096;
constexpr uint32_t kMaxChunkBytes = 16 << 20;

}  // namespace

PsService::PsService(PsCore* core) : core_(core) {
  ReadUnparsed(kInitMethod, &PsService::InitStream);
  ReadUnparsed(kPushMethod, &PsService::PushStream);
  // Served as a bidi stream: the request, then the reply's messages as
  // bytes of their own making (ps/rpc/chunk_codec.h). On the wire a
  // server-streaming call is the same.
  MarkMethodStreamed(
      kPullMethod,
      new grpc::internal::BidiStreamingHandler<PsService, proto::PullRequest, grpc::ByteBuffer>(
          std::mem_fn(&PsService::PullStream), this));
}

template <typename Response>
void PsService::ReadUnparsed(int method, UnparsedHandler<Response> handler) {
  MarkMethodStreamed(
      method, new grpc::internal::ClientStreamingHandler<PsService, grpc::ByteBuffer, Response>(
                  std::mem_fn(handler), this));
}

grpc::Status PsService::InitStream(grpc::ServerContext* ctx,
                                   grpc::ServerReader<grpc::ByteBuffer>* reader,
                                   proto::InitResponse*) {
  return ToGrpcStatus(
      HandleInitStream(core_, ReadStreamParts<proto::InitRequest, proto::InitHeader>(ctx, reader)));
}

grpc::Status PsService::PullStream(
    grpc::ServerContext* ctx,
    grpc::ServerReaderWriter<grpc::ByteBuffer, proto::PullRequest>* stream) {
  proto::PullRequest request;
  if (!stream->Read(&request)) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "Pull: no valid PullRequest");
  }
  return Pull(ctx, request, stream);
}

grpc::Status PsService::Pull(grpc::ServerContext* ctx, const proto::PullRequest& request,
                             grpc::internal::WriterInterface<grpc::ByteBuffer>* writer) {
  auto pulled = core_->Pull(request, ctx->deadline(), [ctx] { return ctx->IsCancelled(); });
  if (!pulled.ok()) return ToGrpcStatus(pulled.status().Annotate("Pull"));
  const uint32_t chunk_bytes =
      request.chunk_bytes() == 0
          ? kDefaultChunkBytes
          : std::clamp(request.chunk_bytes(), kMinChunkBytes, kMaxChunkBytes);
  proto::PullResponse rest;
  rest.set_global_step(pulled->step);
  // The tensors go out from the pulled values themselves.
  BorrowedSlices borrowed;
  for (const auto& [name, tensor] : pulled->tensors) {
    bool sent = ForEachChunkSpan(
        name, *tensor, chunk_bytes,
        [&](const proto::TensorChunk& head, const char* data, size_t n) {
          return writer->Write(EncodeChunkMessage(rest, proto::PullResponse::kChunkFieldNumber,
                                                  head, data, n, &borrowed));
        });
    if (!sent) return grpc::Status(grpc::StatusCode::CANCELLED, "client went away");
  }
  return grpc::Status::OK;
}

grpc::Status PsService::PushStream(grpc::ServerContext* ctx,
                                   grpc::ServerReader<grpc::ByteBuffer>* reader,
                                   proto::PushResponse* response) {
  auto pushed =
      HandlePushStream(core_, ReadStreamParts<proto::PushRequest, proto::PushHeader>(ctx, reader));
  if (!pushed.ok()) return ToGrpcStatus(pushed.status());
  *response = std::move(pushed).value();
  return grpc::Status::OK;
}

grpc::Status PsService::GetStatus(grpc::ServerContext*, const proto::StatusRequest*,
                                  proto::StatusResponse* response) {
  *response = core_->GetStatus();
  response->set_tensor_port(tensor_port_);
  response->set_tensor_socket(tensor_socket_);
  return grpc::Status::OK;
}

grpc::Status PsService::WorkerDone(grpc::ServerContext*, const proto::WorkerDoneRequest* request,
                                   proto::WorkerDoneResponse*) {
  return ToGrpcStatus(core_->WorkerDone(request->worker()).Annotate("WorkerDone"));
}

grpc::Status PsService::SetLiveWorkers(grpc::ServerContext*,
                                       const proto::SetLiveWorkersRequest* request,
                                       proto::SetLiveWorkersResponse* response) {
  auto step = core_->SetLiveWorkers({request->workers().begin(), request->workers().end()});
  if (!step.ok()) return ToGrpcStatus(step.status().Annotate("SetLiveWorkers"));
  response->set_global_step(*step);
  return grpc::Status::OK;
}

grpc::Status PsService::Heartbeat(grpc::ServerContext*, const proto::HeartbeatRequest* request,
                                  proto::HeartbeatResponse* response) {
  auto beat = core_->Heartbeat(request->worker(), request->local_step(), request->loss());
  if (!beat.ok()) return ToGrpcStatus(beat.status().Annotate("Heartbeat"));
  *response = std::move(beat).value();
  return grpc::Status::OK;
}

grpc::Status PsService::EndTraining(grpc::ServerContext*, const proto::EndTrainingRequest* request,
                                    proto::EndTrainingResponse*) {
  return ToGrpcStatus(core_->EndTraining(request->reason()).Annotate("EndTraining"));
}

grpc::Status PsService::Shutdown(grpc::ServerContext*, const proto::ShutdownRequest* request,
                                 proto::ShutdownResponse*) {
  core_->Shutdown(request->reason());
  return grpc::Status::OK;
}

}  // namespace pstrain
