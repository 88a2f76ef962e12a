#include "ps/rpc/ps_service.h"

#include <glog/logging.h>

#include <algorithm>
#include <functional>
#include <utility>

#include "ps/rpc/blocking_reactors.h"
#include "ps/rpc/chunk_codec.h"
#include "ps/rpc/grpc_status.h"
#include "ps/rpc/shared_tensor_slice.h"
#include "ps/rpc/unparsed_stream.h"
#include "ps/tensor_chunks.h"
#include "ps/tensor_streams.h"

namespace pstrain {

namespace {

// Pull chunks: the client may choose their size within these bounds (tiny
// chunks would only make the ps send millions of messages).
constexpr uint32_t kMinChunkBytes = 4096;
constexpr uint32_t kMaxChunkBytes = 16 << 20;

}  // namespace

PsService::PsService(PsCore* core) : core_(core) {}

namespace {

grpc::Status Busy() {
  return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                      "the ps serves " + std::to_string(PsService::kMaxTensorCalls) +
                          " tensor calls already; retry");
}

template <typename Message>
grpc::Status Reply(const Message& message, grpc::ByteBuffer* out) {
  bool own_buffer = false;
  return grpc::SerializationTraits<Message>::Serialize(message, out, &own_buffer);
}

}  // namespace

template <typename Reactor>
Reactor* PsService::StartTensorCall(std::function<grpc::Status(Reactor*)> handler) {
  if (tensor_calls_.fetch_add(1) >= kMaxTensorCalls) {
    tensor_calls_.fetch_sub(1);
    return new Reactor(Busy());
  }
  return new Reactor(&tensor_threads_, [this, handler = std::move(handler)](Reactor* call) {
    const grpc::Status s = handler(call);
    tensor_calls_.fetch_sub(1);
    return s;
  });
}

grpc::ServerReadReactor<grpc::ByteBuffer>* PsService::Init(grpc::CallbackServerContext* ctx,
                                                           grpc::ByteBuffer* response) {
  return StartTensorCall<BlockingReadReactor>([this, ctx, response](BlockingReadReactor* call) {
    const Status s =
        HandleInitStream(core_, ReadStreamParts<proto::InitRequest, proto::InitHeader>(ctx, call));
    if (!s.ok()) return ToGrpcStatus(s);
    return Reply(proto::InitResponse(), response);
  });
}

grpc::ServerReadReactor<grpc::ByteBuffer>* PsService::Push(grpc::CallbackServerContext* ctx,
                                                           grpc::ByteBuffer* response) {
  return StartTensorCall<BlockingReadReactor>([this, ctx, response](BlockingReadReactor* call) {
    auto pushed =
        HandlePushStream(core_, ReadStreamParts<proto::PushRequest, proto::PushHeader>(ctx, call));
    if (!pushed.ok()) return ToGrpcStatus(pushed.status());
    return Reply(*pushed, response);
  });
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* PsService::Pull(grpc::CallbackServerContext* ctx,
                                                            const grpc::ByteBuffer* raw) {
  // A copy shares the request's slices; deserializing consumes it.
  return StartTensorCall<BlockingWriteReactor>(
      [this, ctx, bytes = *raw](BlockingWriteReactor* call) mutable {
        proto::PullRequest request;
        if (!grpc::SerializationTraits<proto::PullRequest>::Deserialize(&bytes, &request).ok()) {
          return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "Pull: no valid PullRequest");
        }
        return ServePull(
            request, ctx->deadline(), [ctx] { return ctx->IsCancelled(); },
            [call](const grpc::ByteBuffer& message) { return call->Write(message); });
      });
}

grpc::Status PsService::ServePull(const proto::PullRequest& request,
                                  std::chrono::system_clock::time_point deadline,
                                  const std::function<bool()>& cancelled,
                                  const std::function<bool(const grpc::ByteBuffer&)>& write) {
  auto pulled = core_->Pull(request, deadline, cancelled);
  if (!pulled.ok()) return ToGrpcStatus(pulled.status().Annotate("Pull"));
  const uint32_t chunk_bytes =
      request.chunk_bytes() == 0
          ? kDefaultChunkBytes
          : std::clamp(request.chunk_bytes(), kMinChunkBytes, kMaxChunkBytes);
  proto::PullResponse rest;
  rest.set_global_step(pulled->step);
  // The tensors go out from the pulled values themselves.
  for (const auto& pulled_tensor : pulled->tensors) {
    const VariableStore::SharedTensor& tensor = pulled_tensor.second;
    bool sent = ForEachChunkSpan(
        pulled_tensor.first, *tensor, chunk_bytes,
        [&](const proto::TensorChunk& head, const char* data, size_t n) {
          return write(EncodeChunkMessage(rest, proto::PullResponse::kChunkFieldNumber, head,
                                          SharedTensorSlice(tensor, data, n)));
        });
    if (!sent) return grpc::Status(grpc::StatusCode::CANCELLED, "client went away");
  }
  return grpc::Status::OK;
}

grpc::Status PsService::ExportRows(grpc::ServerContext* ctx,
                                   const proto::ExportRowsRequest* request,
                                   grpc::ServerWriter<proto::ExportRowsResponse>* writer) {
  return ToGrpcStatus(core_
                          ->ExportRows(*request,
                                       [&](const proto::ExportRowsResponse& reply) {
                                         return !ctx->IsCancelled() && writer->Write(reply);
                                       })
                          .Annotate("ExportRows"));
}

grpc::Status PsService::ImportRows(grpc::ServerContext*,
                                   grpc::ServerReader<proto::ImportRowsRequest>* reader,
                                   proto::ImportRowsResponse* response) {
  proto::ImportRowsRequest part;
  if (!reader->Read(&part) || part.part_case() != proto::ImportRowsRequest::kPlacementFingerprint) {
    return ToGrpcStatus(InvalidArgument("ImportRows: the first message must be the placement"));
  }
  const uint64_t fingerprint = part.placement_fingerprint();
  while (reader->Read(&part)) {
    if (part.part_case() != proto::ImportRowsRequest::kBlock) {
      return ToGrpcStatus(InvalidArgument("ImportRows: a second placement"));
    }
    Status s = core_->ImportRows(fingerprint, part.block(), response);
    if (!s.ok()) return ToGrpcStatus(s);
  }
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
  return ToGrpcStatus(
      core_->WorkerDone(request->worker(), request->failure()).Annotate("WorkerDone"));
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
