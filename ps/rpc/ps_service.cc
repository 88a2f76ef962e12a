#include "ps/rpc/ps_service.h"

#include <glog/logging.h>

#include <algorithm>
#include <functional>
#include <set>
#include <utility>

#include "ps/rpc/grpc_status.h"
#include "ps/rpc/unparsed_stream.h"
#include "ps/tensor_chunks.h"

namespace pstrain {

namespace {

// Method indices in the order of proto/ps.proto's `service Ps`.
constexpr int kInitMethod = 0;
constexpr int kPushMethod = 2;

// Pull chunks: the client may choose their size within these bounds (tiny
// chunks would only make the ps send millions of messages).
constexpr uint32_t kMinChunkBytes = 4096;
constexpr uint32_t kMaxChunkBytes = 16 << 20;
// The longest a Pull may wait for a sync step, whatever its deadline.
constexpr auto kMaxStepWait = std::chrono::minutes(10);

}  // namespace

PsService::PsService(int task_index, uint64_t incarnation, VariableStore* store,
                     std::function<void(const std::string&)> on_shutdown)
    : task_index_(task_index),
      incarnation_(incarnation),
      store_(store),
      on_shutdown_(std::move(on_shutdown)) {
  ReadUnparsed(kInitMethod, &PsService::InitStream);
  ReadUnparsed(kPushMethod, &PsService::PushStream);
}

template <typename Response>
void PsService::ReadUnparsed(int method, UnparsedHandler<Response> handler) {
  MarkMethodStreamed(method, new grpc::internal::ClientStreamingHandler<PsService, grpc::ByteBuffer,
                                                                        Response>(
                                 std::mem_fn(handler), this));
}

Status PsService::CheckWorker(int worker) const {
  // Before Init tells the count, a bound that keeps the registry small.
  constexpr int kMaxWorkers = 1 << 16;
  const int n = num_workers_.load();
  if (worker < 0 || worker >= (n > 0 ? n : kMaxWorkers)) {
    return InvalidArgument("no worker:" + std::to_string(worker) + " in the cluster" +
                           (n > 0 ? " (" + std::to_string(n) + " workers)" : ""));
  }
  return OkStatus();
}

grpc::Status PsService::InitStream(grpc::ServerContext* ctx,
                                   grpc::ServerReader<grpc::ByteBuffer>* reader,
                                   proto::InitResponse*) {
  proto::InitRequest request;
  auto read = ReadParsed(ctx, reader, &request);
  if (!read.ok()) return ToGrpcStatus(read.status().Annotate("Init"));
  if (!*read || !request.has_header()) {
    return ToGrpcStatus(InvalidArgument("Init: the first message must be the header"));
  }
  const proto::InitHeader header = request.header();
  if (header.num_workers() < 0 || header.global_step() < 0 ||
      !(header.ema_decay() >= 0 && header.ema_decay() < 1) ||
      !(header.heartbeat_timeout_secs() >= 0 && header.heartbeat_timeout_secs() < 1e6)) {
    return ToGrpcStatus(InvalidArgument(
        "Init: num_workers and global_step must be >= 0, ema_decay in [0, 1) and "
        "heartbeat_timeout_secs in [0, 1e6)"));
  }
  auto optimizer = Optimizer::Create(header.optimizer());
  if (!optimizer.ok()) return ToGrpcStatus(optimizer.status().Annotate("Init"));

  const std::set<std::string> expected(header.variables().begin(), header.variables().end());
  // A tensor is a declared variable or saved state of one ("<variable>/<slot>").
  auto declared = [&expected](const std::string& name, const Shape&) -> Status {
    if (expected.count(name)) return OkStatus();
    for (size_t slash = name.rfind('/'); slash != std::string::npos && slash > 0;
         slash = name.rfind('/', slash - 1)) {
      if (expected.count(name.substr(0, slash))) return OkStatus();
    }
    return InvalidArgument("tensor " + name + " is no declared variable, nor a slot of one");
  };
  TensorAssembler assembler({store_->max_bytes(), declared});
  for (;;) {
    read = ReadParsed(ctx, reader, &request);
    if (!read.ok()) return ToGrpcStatus(read.status().Annotate("Init"));
    if (!*read) break;
    if (!request.has_chunk()) return ToGrpcStatus(InvalidArgument("Init: a second header"));
    Status s = assembler.Add(request.chunk());
    if (!s.ok()) return ToGrpcStatus(s.Annotate("Init"));
  }
  auto values = assembler.Finish();
  if (!values.ok()) return ToGrpcStatus(values.status().Annotate("Init"));
  for (const std::string& name : expected) {
    if (!values->count(name)) return ToGrpcStatus(InvalidArgument("Init: no value for " + name));
  }
  // What is not a declared variable is saved state; the store checks it
  // belongs to one.
  std::map<std::string, Tensor> state;
  for (auto it = values->begin(); it != values->end();) {
    if (expected.count(it->first)) {
      ++it;
    } else {
      state.insert(values->extract(it++));
    }
  }
  VariableStore::InitOptions options;
  options.placement_fingerprint = header.placement_fingerprint();
  options.holds_global_step = header.holds_global_step();
  options.global_step = header.global_step();
  options.sync = header.sync();
  options.ema_decay = header.ema_decay();
  options.non_trainable.insert(header.non_trainable().begin(), header.non_trainable().end());
  const size_t n = expected.size();
  const size_t restored = state.size();
  Status s = store_->Initialize(options, std::move(optimizer).value(), std::move(values).value(),
                                std::move(state));
  if (!s.ok()) return ToGrpcStatus(s.Annotate("Init"));
  if (header.heartbeat_timeout_secs() > 0) {
    heartbeat_timeout_ = std::chrono::duration<double>(header.heartbeat_timeout_secs());
  }
  num_workers_ = header.num_workers();
  LOG(INFO) << "ps:" << task_index_ << " initialized " << n << " variables ("
            << store_->num_bytes() << " bytes with slots), global_step " << header.global_step()
            << (restored ? ", restored " + std::to_string(restored) + " slots and shadows" : "");
  return grpc::Status::OK;
}

grpc::Status PsService::Pull(grpc::ServerContext* ctx, const proto::PullRequest* request,
                             grpc::ServerWriter<proto::PullResponse>* writer) {
  Status s = store_->CheckPlacement(request->placement_fingerprint());
  if (!s.ok()) return ToGrpcStatus(s);
  if (request->include_state() && request->names_size() > 0) {
    return ToGrpcStatus(InvalidArgument("Pull: include_state takes no names"));
  }
  if (request->min_step() > 0) {
    auto deadline = std::min(ctx->deadline(), std::chrono::system_clock::now() + kMaxStepWait);
    if (request->wait_deadline_ms() > 0) {
      deadline = std::min(deadline, std::chrono::system_clock::now() +
                                        std::chrono::milliseconds(std::min<int64_t>(
                                            request->wait_deadline_ms(), 600000)));
    }
    s = store_->WaitForStep(request->min_step(), deadline, [ctx] { return ctx->IsCancelled(); });
    if (!s.ok()) return ToGrpcStatus(s.Annotate("ps:" + std::to_string(task_index_)));
  }
  const int64_t step = store_->global_step();
  auto values = request->include_state()
                    ? store_->ReadState()
                    : store_->Read({request->names().begin(), request->names().end()});
  if (!values.ok()) return ToGrpcStatus(values.status().Annotate("Pull"));
  const uint32_t chunk_bytes =
      request->chunk_bytes() == 0
          ? kDefaultChunkBytes
          : std::clamp(request->chunk_bytes(), kMinChunkBytes, kMaxChunkBytes);
  proto::PullResponse response;
  response.set_global_step(step);
  for (const auto& [name, tensor] : *values) {
    bool sent = ForEachChunk(name, tensor, chunk_bytes, response.mutable_chunk(),
                             [&] { return writer->Write(response); });
    if (!sent) return grpc::Status(grpc::StatusCode::CANCELLED, "client went away");
  }
  return grpc::Status::OK;
}

grpc::Status PsService::PushStream(grpc::ServerContext* ctx,
                                   grpc::ServerReader<grpc::ByteBuffer>* reader,
                                   proto::PushResponse* response) {
  proto::PushRequest request;
  auto read = ReadParsed(ctx, reader, &request);
  if (!read.ok()) return ToGrpcStatus(read.status().Annotate("Push"));
  if (!*read || !request.has_header()) {
    return ToGrpcStatus(InvalidArgument("Push: the first message must be the header"));
  }
  const proto::PushHeader header = request.header();
  Status s = store_->CheckPlacement(header.placement_fingerprint());
  if (s.ok()) s = CheckWorker(header.worker());
  if (s.ok() && (header.num_tensors() < 0 || header.num_tensors() > store_->num_variables())) {
    s = InvalidArgument("num_tensors " + std::to_string(header.num_tensors()) + ", but this ps " +
                        "holds " + std::to_string(store_->num_variables()) + " variables");
  }
  if (!s.ok()) return ToGrpcStatus(s.Annotate("Push"));
  // Only gradients of this ps's variables, each of its variable's shape, are
  // ever allocated.
  TensorAssembler assembler({store_->max_bytes(), [this](const std::string& name, const Shape& shape) {
                               return store_->CheckGradient(name, shape);
                             }});
  for (;;) {
    read = ReadParsed(ctx, reader, &request);
    if (!read.ok()) {
      return ToGrpcStatus(read.status().Annotate("Push from worker:" +
                                                 std::to_string(header.worker()) +
                                                 "; nothing applied"));
    }
    if (!*read) break;
    if (!request.has_chunk()) return ToGrpcStatus(InvalidArgument("Push: a second header"));
    s = assembler.Add(request.chunk());
    if (!s.ok()) return ToGrpcStatus(s.Annotate("Push"));
  }
  auto grads = assembler.Finish();
  if (!grads.ok()) return ToGrpcStatus(grads.status().Annotate("Push"));
  if (grads->size() != static_cast<size_t>(header.num_tensors())) {
    return ToGrpcStatus(InvalidArgument(
        "Push from worker:" + std::to_string(header.worker()) + ": the stream ended after " +
        std::to_string(grads->size()) + " of " + std::to_string(header.num_tensors()) +
        " gradients; nothing applied"));
  }
  if (store_->sync_enabled()) {
    auto r = store_->OfferSyncGradients(header.worker(), header.computed_at_step(),
                                        std::move(grads).value());
    if (!r.ok()) return ToGrpcStatus(r.status().Annotate("Push"));
    response->set_outcome(r->outcome);
    response->set_global_step(r->step);
    if (header.local_step() > 0) workers_.Heartbeat(header.worker(), header.local_step());
    return grpc::Status::OK;
  }
  if (header.local_step() > 0) workers_.Heartbeat(header.worker(), header.local_step());
  auto step =
      store_->ApplyGradients(*grads, header.increment_global_step(), header.computed_at_step());
  if (!step.ok()) return ToGrpcStatus(step.status().Annotate("Push"));
  response->set_outcome(proto::APPLIED);
  response->set_global_step(*step);
  return grpc::Status::OK;
}

grpc::Status PsService::GetStatus(grpc::ServerContext*, const proto::StatusRequest*,
                                  proto::StatusResponse* response) {
  response->set_task_index(task_index_);
  response->set_incarnation(incarnation_);
  response->set_ready(store_->ready());
  response->set_placement_fingerprint(store_->placement_fingerprint());
  response->set_holds_global_step(store_->holds_global_step());
  response->set_global_step(store_->global_step());
  response->set_num_variables(store_->num_variables());
  response->set_num_bytes(store_->num_bytes());
  response->set_learning_rate(store_->learning_rate());
  const VariableStore::SyncStats sync = store_->sync_stats();
  response->set_pending_gradients(sync.pending);
  response->set_required_gradients(sync.required);
  response->set_stale_dropped(sync.stale_dropped);
  response->set_duplicates_dropped(sync.duplicates_dropped);
  for (const WorkerRegistry::WorkerState& w : workers_.Snapshot()) {
    proto::WorkerState* ws = response->add_workers();
    ws->set_worker(w.worker);
    ws->set_seconds_since_heartbeat(w.seconds_since_heartbeat);
    ws->set_local_step(w.local_step);
    ws->set_done(w.done);
    ws->set_loss(w.loss);
    if (w.done) response->add_done_workers(w.worker);
  }
  return grpc::Status::OK;
}

grpc::Status PsService::WorkerDone(grpc::ServerContext*, const proto::WorkerDoneRequest* request,
                                   proto::WorkerDoneResponse*) {
  Status s = CheckWorker(request->worker());
  if (!s.ok()) return ToGrpcStatus(s.Annotate("WorkerDone"));
  workers_.MarkDone(request->worker());
  LOG(INFO) << "ps:" << task_index_ << " worker:" << request->worker() << " finished";
  return grpc::Status::OK;
}

grpc::Status PsService::SetLiveWorkers(grpc::ServerContext*,
                                       const proto::SetLiveWorkersRequest* request,
                                       proto::SetLiveWorkersResponse* response) {
  std::set<int> distinct;
  for (int w : request->workers()) {
    Status s = CheckWorker(w);
    if (s.ok() && !distinct.insert(w).second) {
      s = InvalidArgument("worker:" + std::to_string(w) + " named twice");
    }
    if (!s.ok()) return ToGrpcStatus(s.Annotate("SetLiveWorkers"));
  }
  const int live = request->workers_size();
  auto step = store_->SetLiveReplicas(live);
  if (!step.ok()) return ToGrpcStatus(step.status().Annotate("SetLiveWorkers"));
  std::string names;
  for (int w : request->workers()) names += (names.empty() ? "" : ", ") + ("worker:" + std::to_string(w));
  LOG(INFO) << "ps:" << task_index_ << " at step " << *step << ": " << live
            << " workers can still push" << (names.empty() ? "" : " (" + names + ")")
            << "; a step needs " << store_->sync_stats().required << " gradients";
  response->set_global_step(*step);
  return grpc::Status::OK;
}

grpc::Status PsService::Heartbeat(grpc::ServerContext*, const proto::HeartbeatRequest* request,
                                  proto::HeartbeatResponse* response) {
  Status s = CheckWorker(request->worker());
  if (!s.ok()) return ToGrpcStatus(s.Annotate("Heartbeat"));
  workers_.Heartbeat(request->worker(), request->local_step(), request->loss());
  response->set_global_step(store_->global_step());
  response->set_min_live_local_step(workers_.MinLiveLocalStep(heartbeat_timeout_));
  return grpc::Status::OK;
}

grpc::Status PsService::Shutdown(grpc::ServerContext*, const proto::ShutdownRequest* request,
                                 proto::ShutdownResponse*) {
  LOG(INFO) << "ps:" << task_index_ << " shutdown requested: " << request->reason();
  on_shutdown_(request->reason());
  return grpc::Status::OK;
}

}  // namespace pstrain
