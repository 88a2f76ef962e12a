#include "ps/rpc/ps_service.h"

#include <glog/logging.h>

#include <algorithm>
#include <functional>
#include <utility>

#include "ps/rpc/blocking_reactors.h"
#include "ps/rpc/chunk_codec.h"
#include "ps/rpc/gathering_reader.h"
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

PsService::PsService(PsCore* core, ThreadPool* requests, const StreamLimits& streams)
    : core_(core), requests_(requests), streams_(streams) {}

PsService::~PsService() = default;

namespace {

template <typename Message>
grpc::Status Reply(const Message& message, grpc::ByteBuffer* out) {
  bool own_buffer = false;
  return grpc::SerializationTraits<Message>::Serialize(message, out, &own_buffer);
}

}  // namespace

grpc::ServerReadReactor<grpc::ByteBuffer>* PsService::Init(grpc::CallbackServerContext* ctx,
                                                           grpc::ByteBuffer* response) {
  return new GatheringByteReader(
      ctx, &streams_, requests_, "Init", [this, ctx, response](GatheringByteReader* call) {
        const Status s = HandleInitStream(
            core_, ReadStreamParts<proto::InitRequest, proto::InitHeader>(ctx, call));
        if (!s.ok()) return ToGrpcStatus(s);
        return Reply(proto::InitResponse(), response);
      });
}

grpc::ServerReadReactor<grpc::ByteBuffer>* PsService::Push(grpc::CallbackServerContext* ctx,
                                                           grpc::ByteBuffer* response) {
  return new GatheringByteReader(
      ctx, &streams_, requests_, "Push", [this, ctx, response](GatheringByteReader* call) {
        auto pushed = HandlePushStream(
            core_, ReadStreamParts<proto::PushRequest, proto::PushHeader>(ctx, call));
        if (!pushed.ok()) return ToGrpcStatus(pushed.status());
        return Reply(*pushed, response);
      });
}

grpc::ServerWriteReactor<grpc::ByteBuffer>* PsService::Pull(grpc::CallbackServerContext* ctx,
                                                            const grpc::ByteBuffer* raw) {
  auto* call = new BlockingWriteReactor;
  // A copy shares the request's slices; deserializing consumes it.
  grpc::ByteBuffer bytes = *raw;
  auto request = std::make_shared<proto::PullRequest>();
  if (!grpc::SerializationTraits<proto::PullRequest>::Deserialize(&bytes, request.get()).ok()) {
    call->Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "Pull: no valid PullRequest"));
    return call;
  }
  auto serve = [this, ctx, request](const Status& waited) {
    return [this, ctx, request, waited](BlockingWriteReactor* call) {
      if (!waited.ok()) return ToGrpcStatus(waited);
      return ServePull(
          *request, ctx->deadline(), [ctx] { return ctx->IsCancelled(); },
          [call](const grpc::ByteBuffer& message) { return call->Write(message); });
    };
  };
  // The wait for the step, if any, holds no thread: the call is served
  // once it is over.
  auto wait = core_->AwaitPullable(
      *request, ctx->deadline(),
      [this, call, serve](const Status& waited) { call->Serve(requests_, serve(waited)); });
  if (!wait.ok()) {
    call->Finish(ToGrpcStatus(wait.status().Annotate("Pull")));
  } else if (*wait == 0) {
    call->Serve(requests_, serve(OkStatus()));
  } else {
    call->WaitUntil([this, id = *wait] { core_->CancelPullWait(id); });
  }
  return call;
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

grpc::ServerWriteReactor<proto::ExportRowsResponse>* PsService::ExportRows(
    grpc::CallbackServerContext* ctx, const proto::ExportRowsRequest* request) {
  auto* call = new BlockingWriter<proto::ExportRowsResponse>;
  call->Serve(requests_, [this, ctx, request](BlockingWriter<proto::ExportRowsResponse>* call) {
    return ToGrpcStatus(core_
                            ->ExportRows(*request,
                                         [&](const proto::ExportRowsResponse& reply) {
                                           return !ctx->IsCancelled() && call->Write(reply);
                                         })
                            .Annotate("ExportRows"));
  });
  return call;
}

grpc::ServerReadReactor<proto::ImportRowsRequest>* PsService::ImportRows(
    grpc::CallbackServerContext* ctx, proto::ImportRowsResponse* response) {
  return new GatheringReader<proto::ImportRowsRequest>(
      ctx, &streams_, requests_, "ImportRows",
      [this, response](GatheringReader<proto::ImportRowsRequest>* reader) {
        proto::ImportRowsRequest part;
        if (!reader->Read(&part) ||
            part.part_case() != proto::ImportRowsRequest::kPlacementFingerprint) {
          return ToGrpcStatus(
              InvalidArgument("ImportRows: the first message must be the placement"));
        }
        const uint64_t fingerprint = part.placement_fingerprint();
        while (reader->Read(&part)) {
          if (part.part_case() == proto::ImportRowsRequest::kFinishRestore) {
            Status s = core_->FinishRestore(fingerprint);
            if (!s.ok()) return ToGrpcStatus(s);
            continue;
          }
          if (part.part_case() != proto::ImportRowsRequest::kBlock) {
            return ToGrpcStatus(InvalidArgument("ImportRows: a second placement"));
          }
          Status s = core_->ImportRows(fingerprint, part.block(), response);
          if (!s.ok()) return ToGrpcStatus(s);
        }
        return grpc::Status::OK;
      });
}

namespace {

// A control call's answer, on the gRPC thread that received it: each is
// quick and never blocks. `handle` gets the request parsed as Request and
// fills a Response; a request that is not a Request is refused naming
// `call`.
template <typename Request, typename Response, typename Handle>
grpc::ServerUnaryReactor* Answer(grpc::CallbackServerContext* ctx, const grpc::ByteBuffer* raw,
                                 grpc::ByteBuffer* out, const char* call, Handle handle) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  // A copy shares the request's slices; deserializing consumes it.
  grpc::ByteBuffer bytes = *raw;
  Request request;
  if (!grpc::SerializationTraits<Request>::Deserialize(&bytes, &request).ok()) {
    reactor->Finish(ToGrpcStatus(InvalidArgument(
        std::string(call) + ": the request is not a valid " + Request::descriptor()->name())));
    return reactor;
  }
  Response response;
  const Status s = handle(request, &response);
  reactor->Finish(s.ok() ? Reply(response, out) : ToGrpcStatus(s.Annotate(call)));
  return reactor;
}

}  // namespace

grpc::ServerUnaryReactor* PsService::GetStatus(grpc::CallbackServerContext* ctx,
                                               const grpc::ByteBuffer* request,
                                               grpc::ByteBuffer* response) {
  return Answer<proto::StatusRequest, proto::StatusResponse>(
      ctx, request, response, "GetStatus", [this](const auto& r, auto* out) {
        *out = core_->GetStatus(r.omit_workers());
        out->set_tensor_port(tensor_port_);
        out->set_tensor_socket(tensor_socket_);
        return OkStatus();
      });
}

grpc::ServerUnaryReactor* PsService::WorkerDone(grpc::CallbackServerContext* ctx,
                                                const grpc::ByteBuffer* request,
                                                grpc::ByteBuffer* response) {
  return Answer<proto::WorkerDoneRequest, proto::WorkerDoneResponse>(
      ctx, request, response, "WorkerDone",
      [this](const auto& r, auto*) { return core_->WorkerDone(r.worker(), r.failure()); });
}

grpc::ServerUnaryReactor* PsService::SetLiveWorkers(grpc::CallbackServerContext* ctx,
                                                    const grpc::ByteBuffer* request,
                                                    grpc::ByteBuffer* response) {
  return Answer<proto::SetLiveWorkersRequest, proto::SetLiveWorkersResponse>(
      ctx, request, response, "SetLiveWorkers", [this](const auto& r, auto* out) {
        PS_ASSIGN_OR_RETURN(const int64_t step,
                            core_->SetLiveWorkers({r.workers().begin(), r.workers().end()}));
        out->set_global_step(step);
        return OkStatus();
      });
}

grpc::ServerUnaryReactor* PsService::Heartbeat(grpc::CallbackServerContext* ctx,
                                               const grpc::ByteBuffer* request,
                                               grpc::ByteBuffer* response) {
  return Answer<proto::HeartbeatRequest, proto::HeartbeatResponse>(
      ctx, request, response, "Heartbeat", [this](const auto& r, auto* out) {
        PS_ASSIGN_OR_RETURN(*out, core_->Heartbeat(r.worker(), r.local_step(), r.loss()));
        return OkStatus();
      });
}

grpc::ServerUnaryReactor* PsService::EndTraining(grpc::CallbackServerContext* ctx,
                                                 const grpc::ByteBuffer* request,
                                                 grpc::ByteBuffer* response) {
  return Answer<proto::EndTrainingRequest, proto::EndTrainingResponse>(
      ctx, request, response, "EndTraining",
      [this](const auto& r, auto*) { return core_->EndTraining(r.reason()); });
}

grpc::ServerUnaryReactor* PsService::Shutdown(grpc::CallbackServerContext* ctx,
                                              const grpc::ByteBuffer* request,
                                              grpc::ByteBuffer* response) {
  return Answer<proto::ShutdownRequest, proto::ShutdownResponse>(ctx, request, response, "Shutdown",
                                                                 [this](const auto& r, auto*) {
                                                                   core_->Shutdown(r.reason());
                                                                   return OkStatus();
                                                                 });
}

}  // namespace pstrain
