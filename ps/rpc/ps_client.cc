#include "ps/rpc/ps_client.h"

#include <glog/logging.h>

#include "cluster/cluster_spec.h"
#include "core/status_action.h"
#include "core/tls.h"
#include "ps/rpc/borrowed_slices.h"
#include "ps/rpc/chunk_codec.h"
#include "ps/rpc/generic_call.h"
#include "ps/rpc/grpc_options.h"
#include "ps/rpc/grpc_status.h"
#include "ps/rpc/grpc_tls.h"

namespace pstrain {

namespace {
constexpr char kInitMethod[] = "/pstrain.proto.Ps/Init";
constexpr char kPullMethod[] = "/pstrain.proto.Ps/Pull";
constexpr char kPushMethod[] = "/pstrain.proto.Ps/Push";
}  // namespace

PsClient::PsClient(int ps_index, const std::string& address, const PsClientOptions& options)
    : name_("ps:" + std::to_string(ps_index) + " (" + address + ")"),
      host_(cluster::AddressHost(address)),
      chunk_bytes_(options.chunk_bytes),
      channel_(
          grpc::CreateCustomChannel(address, PsChannelCredentials(), DefaultChannelArguments())),
      stub_(proto::Ps::NewStub(channel_)),
      generic_stub_(channel_),
      wire_dtype_(options.wire_dtype),
      shared_memory_(options.shared_memory) {}

void PsClient::SetDeadline(grpc::ClientContext* ctx, std::chrono::milliseconds t) const {
  ctx->set_deadline(std::chrono::system_clock::now() + t);
}

template <typename Request, typename Header, typename Response>
Status PsClient::SendTensors(const std::string& method, const Header& header,
                             const NamedTensors& tensors, Response* response) {
  // The tensors go out from their own memory, until the call is over.
  BorrowedSlices borrowed;
  grpc::ClientContext ctx;
  SetDeadline(&ctx, transfer_timeout_);
  GenericCall call(&generic_stub_, &ctx, method);
  Request first;
  *first.mutable_header() = header;
  grpc::ByteBuffer bytes;
  bool own_buffer = false;
  grpc::SerializationTraits<Request>::Serialize(first, &bytes, &own_buffer);
  bool ok = call.Write(bytes);
  const Request rest;
  for (auto it = tensors.begin(); ok && it != tensors.end(); ++it) {
    ok = ForEachChunkSpan(it->first, *it->second, chunk_bytes_,
                          [&](const proto::TensorChunk& head, const char* data, size_t n) {
                            return call.Write(EncodeChunkMessage(rest, Request::kChunkFieldNumber,
                                                                 head, borrowed.Borrow(data, n)));
                          });
  }
  ok = ok && call.WritesDone();
  grpc::ByteBuffer reply;
  const bool replied = ok && call.Read(&reply);
  PS_RETURN_IF_ERROR(FromGrpcStatus(call.Finish(), name_));
  if (!replied) return DataLoss(name_ + ": the call ended without a reply");
  const grpc::Status parsed = grpc::SerializationTraits<Response>::Deserialize(&reply, response);
  if (!parsed.ok()) return DataLoss(name_ + ": a reply that does not parse");
  return OkStatus();
}

Status PsClient::Init(const proto::InitHeader& header, const NamedTensors& values) {
  proto::InitResponse response;
  return SendTensors<proto::InitRequest>(kInitMethod, header, values, &response);
}

Status PsClient::PullWithRows(uint64_t fingerprint, const std::vector<std::string>& names,
                              const std::vector<proto::TableKeys>& lookups,
                              std::map<std::string, Tensor>* out, int64_t* step, int64_t min_step,
                              std::chrono::milliseconds wait) {
  proto::PullRequest request;
  request.set_placement_fingerprint(fingerprint);
  for (const std::string& n : names) request.add_names(n);
  for (const proto::TableKeys& t : lookups) *request.add_lookups() = t;
  request.set_min_step(min_step);
  request.set_wire_dtype(wire_dtype_);
  if (min_step > 0) {
    // The ps gives up waiting at this deadline (the transfer's own when the
    // caller named none); the transfer has the rest.
    if (wait.count() <= 0) wait = transfer_timeout_;
    request.set_wait_deadline_ms(static_cast<int64_t>(wait.count()));
  }
  return RunPull(request, transfer_timeout_ + wait, out, step);
}

Status PsClient::PullState(uint64_t fingerprint, std::map<std::string, Tensor>* out,
                           int64_t* step) {
  proto::PullRequest request;
  request.set_placement_fingerprint(fingerprint);
  request.set_include_state(true);
  return RunPull(request, transfer_timeout_, out, step);
}

StatusOr<std::shared_ptr<tcp::TensorChannelClient>> PsClient::Channel() {
  MutexLock lock(&channel_mu_);
  if (!channel_known_) {
    // Fails fast, as the transfer it precedes would.
    grpc::ClientContext ctx;
    SetDeadline(&ctx, std::chrono::seconds(10));
    proto::StatusResponse status;
    proto::StatusRequest request;
    request.set_omit_workers(true);
    PS_RETURN_IF_ERROR(FromGrpcStatus(stub_->GetStatus(&ctx, request, &status), name_));
    tensor_channel_.reset();
    if (status.tensor_port() > 0) {
      auto tls = TaskClientSslCtx();  // the same certificates as gRPC's
      if (!tls.ok()) return tls.status().Annotate(name_);
      tensor_channel_ = std::make_shared<tcp::TensorChannelClient>(
          host_, status.tensor_port(), shared_memory_ && OnThisHost() ? status.tensor_socket() : "",
          *tls);
      if (arena_ != nullptr) tensor_channel_->UseArena(arena_);
    }
    channel_known_ = true;
  }
  if (std::chrono::steady_clock::now() < channel_skipped_until_) {
    return std::shared_ptr<tcp::TensorChannelClient>();
  }
  return tensor_channel_;
}

bool PsClient::FallBack(const Status& s) {
  if (ActionFor(s) != Action::kOtherRoute) return false;
  // Nothing reached the ps: this round goes over gRPC, and the next ones
  // for a while, before the channel is tried again.
  {
    MutexLock lock(&channel_mu_);
    channel_skipped_until_ = std::chrono::steady_clock::now() + kChannelSkip;
  }
  if (!fallback_logged_.exchange(true)) {
    LOG(WARNING) << name_ << ": " << s.message() << "; tensors go over gRPC for "
                 << kChannelSkip.count() << " s, then the tensor channel is tried again";
  } else {
    VLOG(1) << name_ << ": " << s.message() << "; over gRPC for now";
  }
  return true;
}

bool PsClient::OnThisHost() const {
  return host_ == "localhost" || host_ == "::1" || host_.rfind("127.", 0) == 0;
}

void PsClient::set_arena(std::shared_ptr<const tcp::SharedRegion> arena) {
  MutexLock lock(&channel_mu_);
  arena_ = std::move(arena);
  if (tensor_channel_ != nullptr) tensor_channel_->UseArena(arena_);
}

bool PsClient::SharesMemory() {
  MutexLock lock(&channel_mu_);
  return tensor_channel_ != nullptr && tensor_channel_->sharing_memory();
}

Status PsClient::ChannelOutcome(Status s) {
  if (s.code() == Code::kUnavailable || s.code() == Code::kDeadlineExceeded) {
    MutexLock lock(&channel_mu_);
    channel_known_ = false;
  }
  return s.Annotate(name_);
}

Status PsClient::RunPull(proto::PullRequest request, std::chrono::milliseconds timeout,
                         std::map<std::string, Tensor>* out, int64_t* step) {
  PS_ASSIGN_OR_RETURN(auto channel, Channel());
  if (channel != nullptr) {
    const Status pulled = channel->Pull(request, out, step, timeout);
    if (!FallBack(pulled)) return ChannelOutcome(pulled);
  }
  grpc::ClientContext ctx;
  SetDeadline(&ctx, timeout);
  request.set_chunk_bytes(chunk_bytes_);
  GenericCall call(&generic_stub_, &ctx, kPullMethod);
  grpc::ByteBuffer bytes;
  bool own_buffer = false;
  grpc::SerializationTraits<proto::PullRequest>::Serialize(request, &bytes, &own_buffer);
  const bool sent = call.Write(bytes) && call.WritesDone();
  TensorAssembler assembler;
  assembler.Reuse(out);
  Status bad;
  while (sent && call.Read(&bytes)) {
    if (!bad.ok()) continue;
    proto::PullResponse rest;
    auto decoded =
        DecodeChunkMessage(&bytes, proto::PullResponse::kChunkFieldNumber, &rest, &assembler);
    bad = decoded.status();
    if (bad.ok() && !*decoded) bad = InvalidArgument("a message without a tensor chunk");
    if (bad.ok() && step != nullptr) *step = rest.global_step();
    if (!bad.ok()) ctx.TryCancel();
  }
  Status s = FromGrpcStatus(call.Finish(), name_);
  if (!bad.ok()) return bad.Annotate(name_ + ": Pull reply");
  if (!s.ok()) return s;
  return assembler.FinishInto(out);
}

StatusOr<proto::PushResponse> PsClient::Push(const proto::PushHeader& header,
                                             const NamedTensors& grads) {
  return PushInto(header, grads, nullptr);
}

StatusOr<proto::PushResponse> PsClient::PushAndPull(const proto::PushHeader& header,
                                                    const NamedTensors& grads,
                                                    const std::map<std::string, Tensor>& into) {
  return PushInto(header, grads, &into);
}

StatusOr<proto::PushResponse> PsClient::PushInto(const proto::PushHeader& header,
                                                 const NamedTensors& grads,
                                                 const std::map<std::string, Tensor>* into) {
  proto::PushHeader counted = header;
  counted.set_num_tensors(static_cast<int32_t>(grads.size()));
  PS_ASSIGN_OR_RETURN(auto channel, Channel());
  if (channel != nullptr) {
    auto pushed = channel->Push(counted, grads, wire_dtype_, transfer_timeout_, into);
    if (pushed.ok()) return pushed;
    if (!FallBack(pushed.status())) return ChannelOutcome(pushed.status());
  }
  // Over gRPC, tensors travel as float32 whatever wire_dtype_ says.
  proto::PushResponse response;
  PS_RETURN_IF_ERROR(SendTensors<proto::PushRequest>(kPushMethod, counted, grads, &response));
  return response;
}

// A push over the tensor channel whose errors read as PsClient's.
class PsClient::ChannelPush : public PushStream {
 public:
  ChannelPush(PsClient* client, std::shared_ptr<tcp::TensorChannelClient> channel,
              std::unique_ptr<PushStream> stream)
      : client_(client), channel_(std::move(channel)), stream_(std::move(stream)) {}

  Status Write(const std::string& name, const Tensor& tensor) override {
    const Status s = stream_->Write(name, tensor);
    return s.ok() ? s : client_->ChannelOutcome(s);
  }
  StatusOr<proto::PushResponse> Finish() override {
    auto pushed = stream_->Finish();
    if (!pushed.ok()) return client_->ChannelOutcome(pushed.status());
    return pushed;
  }

 private:
  PsClient* const client_;
  const std::shared_ptr<tcp::TensorChannelClient> channel_;  // keeps the stream's owner alive
  const std::unique_ptr<PushStream> stream_;
};

StatusOr<std::unique_ptr<PushStream>> PsClient::StartPush(const proto::PushHeader& header) {
  PS_ASSIGN_OR_RETURN(auto channel, Channel());
  if (channel == nullptr) return PsConnection::StartPush(header);
  auto stream = channel->StartPush(header, wire_dtype_, transfer_timeout_);
  if (!stream.ok()) {
    if (FallBack(stream.status())) return PsConnection::StartPush(header);
    return ChannelOutcome(stream.status());
  }
  return std::unique_ptr<PushStream>(new ChannelPush(this, channel, std::move(stream).value()));
}

StatusOr<proto::HeartbeatResponse> PsClient::Heartbeat(int worker, int64_t local_step, float loss) {
  grpc::ClientContext ctx;
  SetDeadline(&ctx, std::chrono::seconds(5));
  proto::HeartbeatRequest request;
  request.set_worker(worker);
  request.set_local_step(local_step);
  request.set_loss(loss);
  proto::HeartbeatResponse response;
  PS_RETURN_IF_ERROR(FromGrpcStatus(stub_->Heartbeat(&ctx, request, &response), name_));
  return response;
}

StatusOr<proto::StatusResponse> PsClient::GetStatus(std::chrono::milliseconds timeout) {
  return AskStatus(proto::StatusRequest(), timeout);
}

StatusOr<proto::StatusResponse> PsClient::GetReadiness(std::chrono::milliseconds timeout) {
  proto::StatusRequest request;
  request.set_omit_workers(true);
  return AskStatus(request, timeout);
}

StatusOr<proto::StatusResponse> PsClient::AskStatus(const proto::StatusRequest& request,
                                                    std::chrono::milliseconds timeout) {
  grpc::ClientContext ctx;
  SetDeadline(&ctx, timeout);
  proto::StatusResponse response;
  // Whoever polls a ps that is (re)starting wants the answer as soon as it
  // listens: wait for the connection (within the deadline) instead of
  // failing at once while gRPC backs off between connection attempts.
  ctx.set_wait_for_ready(true);
  Status s = FromGrpcStatus(stub_->GetStatus(&ctx, request, &response), name_);
  if (s.code() == Code::kDeadlineExceeded || s.code() == Code::kUnavailable) {
    // gRPC says only that the deadline passed; a name that does not
    // resolve is worth saying in those words.
    const Status resolves = cluster::CheckHostResolves(host_);
    if (!resolves.ok()) return resolves.Annotate(name_);
  }
  PS_RETURN_IF_ERROR(s);
  return response;
}

Status PsClient::ExportRows(
    uint64_t fingerprint, const std::string& table, bool delta, bool start_deltas,
    const std::function<Status(const proto::ExportRowsResponse&)>& on_block) {
  proto::ExportRowsRequest request;
  request.set_placement_fingerprint(fingerprint);
  request.set_table(table);
  request.set_delta(delta);
  request.set_start_deltas(start_deltas);
  grpc::ClientContext ctx;
  SetDeadline(&ctx, transfer_timeout_);
  auto reader = stub_->ExportRows(&ctx, request);
  proto::ExportRowsResponse reply;
  Status handled = OkStatus();
  while (handled.ok() && reader->Read(&reply)) handled = on_block(reply);
  if (!handled.ok()) {
    ctx.TryCancel();
    reader->Finish().ok();  // the call is given up
    return handled;
  }
  return FromGrpcStatus(reader->Finish(), name_).Annotate("ExportRows of " + table);
}

StatusOr<proto::ImportRowsResponse> PsClient::ImportRows(
    uint64_t fingerprint, const std::function<bool(proto::RowBlock*)>& next) {
  grpc::ClientContext ctx;
  SetDeadline(&ctx, transfer_timeout_);
  proto::ImportRowsResponse response;
  auto writer = stub_->ImportRows(&ctx, &response);
  proto::ImportRowsRequest part;
  part.set_placement_fingerprint(fingerprint);
  bool ok = writer->Write(part);
  proto::RowBlock block;
  while (ok && next(&block)) {
    *part.mutable_block() = std::move(block);
    ok = writer->Write(part);
    block.Clear();
  }
  writer->WritesDone();
  PS_RETURN_IF_ERROR(FromGrpcStatus(writer->Finish(), name_).Annotate("ImportRows"));
  return response;
}

Status PsClient::FinishRestore(uint64_t fingerprint) {
  grpc::ClientContext ctx;
  SetDeadline(&ctx, std::chrono::seconds(10));
  proto::ImportRowsResponse response;
  auto writer = stub_->ImportRows(&ctx, &response);
  proto::ImportRowsRequest part;
  part.set_placement_fingerprint(fingerprint);
  if (writer->Write(part)) {
    part.set_finish_restore(true);
    writer->Write(part);
  }
  writer->WritesDone();
  return FromGrpcStatus(writer->Finish(), name_).Annotate("FinishRestore");
}

// The control calls: one unary request, a 10 s deadline, an empty reply.
template <typename Request, typename Response>
Status PsClient::Control(grpc::Status (proto::Ps::Stub::*method)(grpc::ClientContext*,
                                                                 const Request&, Response*),
                         const Request& request) {
  grpc::ClientContext ctx;
  SetDeadline(&ctx, std::chrono::seconds(10));
  Response response;
  return FromGrpcStatus(((*stub_).*method)(&ctx, request, &response), name_);
}

Status PsClient::WorkerDone(int worker, const std::string& failure) {
  proto::WorkerDoneRequest request;
  request.set_worker(worker);
  request.set_failure(failure);
  return Control(&proto::Ps::Stub::WorkerDone, request);
}

Status PsClient::SetLiveWorkers(const std::vector<int>& workers) {
  proto::SetLiveWorkersRequest request;
  for (int w : workers) request.add_workers(w);
  return Control(&proto::Ps::Stub::SetLiveWorkers, request);
}

Status PsClient::EndTraining(const std::string& reason) {
  proto::EndTrainingRequest request;
  request.set_reason(reason);
  return Control(&proto::Ps::Stub::EndTraining, request);
}

Status PsClient::Shutdown(const std::string& reason) {
  proto::ShutdownRequest request;
  request.set_reason(reason);
  return Control(&proto::Ps::Stub::Shutdown, request);
}

}  // namespace pstrain
