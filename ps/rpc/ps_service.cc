#include "ps/rpc/ps_service.h"

#include <glog/logging.h>

#include <set>
#include <utility>

#include "ps/rpc/grpc_status.h"
#include "ps/tensor_chunks.h"

namespace pstrain {

PsService::PsService(int task_index, uint64_t incarnation, VariableStore* store,
                     std::function<void(const std::string&)> on_shutdown)
    : task_index_(task_index),
      incarnation_(incarnation),
      store_(store),
      on_shutdown_(std::move(on_shutdown)) {}

grpc::Status PsService::Init(grpc::ServerContext*, grpc::ServerReader<proto::InitRequest>* reader,
                             proto::InitResponse*) {
  proto::InitRequest request;
  if (!reader->Read(&request) || !request.has_header()) {
    return ToGrpcStatus(InvalidArgument("Init: the first message must be the header"));
  }
  const proto::InitHeader header = request.header();
  auto optimizer = Optimizer::Create(header.optimizer());
  if (!optimizer.ok()) return ToGrpcStatus(optimizer.status().Annotate("Init"));

  TensorAssembler assembler;
  while (reader->Read(&request)) {
    if (!request.has_chunk()) return ToGrpcStatus(InvalidArgument("Init: a second header"));
    Status s = assembler.Add(request.chunk());
    if (!s.ok()) return ToGrpcStatus(s.Annotate("Init"));
  }
  auto values = assembler.Finish();
  if (!values.ok()) return ToGrpcStatus(values.status().Annotate("Init"));
  std::set<std::string> expected(header.variables().begin(), header.variables().end());
  for (const std::string& name : expected) {
    if (!values->count(name)) return ToGrpcStatus(InvalidArgument("Init: no value for " + name));
  }
  for (const auto& [name, value] : *values) {
    if (!expected.count(name)) {
      return ToGrpcStatus(InvalidArgument("Init: value for undeclared variable " + name));
    }
  }
  VariableStore::InitOptions options;
  options.placement_fingerprint = header.placement_fingerprint();
  options.holds_global_step = header.holds_global_step();
  options.global_step = header.global_step();
  const size_t n = values->size();
  Status s = store_->Initialize(options, std::move(optimizer).value(), std::move(values).value());
  if (s.ok()) {
    LOG(INFO) << "ps:" << task_index_ << " initialized " << n << " variables ("
              << store_->num_bytes() << " bytes with slots), global_step "
              << header.global_step();
  }
  return ToGrpcStatus(s);
}

grpc::Status PsService::Pull(grpc::ServerContext*, const proto::PullRequest* request,
                             grpc::ServerWriter<proto::PullResponse>* writer) {
  Status s = store_->CheckPlacement(request->placement_fingerprint());
  if (!s.ok()) return ToGrpcStatus(s);
  const int64_t step = store_->global_step();
  auto values = store_->Read({request->names().begin(), request->names().end()});
  if (!values.ok()) return ToGrpcStatus(values.status());
  proto::PullResponse response;
  response.set_global_step(step);
  for (const auto& [name, tensor] : *values) {
    bool sent = ForEachChunk(name, tensor, request->chunk_bytes(),
                             [&](const proto::TensorChunk& chunk) {
                               *response.mutable_chunk() = chunk;
                               return writer->Write(response);
                             });
    if (!sent) return grpc::Status(grpc::StatusCode::CANCELLED, "client went away");
  }
  return grpc::Status::OK;
}

grpc::Status PsService::Push(grpc::ServerContext*, grpc::ServerReader<proto::PushRequest>* reader,
                             proto::PushResponse* response) {
  proto::PushRequest request;
  if (!reader->Read(&request) || !request.has_header()) {
    return ToGrpcStatus(InvalidArgument("Push: the first message must be the header"));
  }
  const proto::PushHeader header = request.header();
  Status s = store_->CheckPlacement(header.placement_fingerprint());
  if (!s.ok()) return ToGrpcStatus(s);
  TensorAssembler assembler;
  while (reader->Read(&request)) {
    if (!request.has_chunk()) return ToGrpcStatus(InvalidArgument("Push: a second header"));
    s = assembler.Add(request.chunk());
    if (!s.ok()) return ToGrpcStatus(s.Annotate("Push"));
  }
  auto grads = assembler.Finish();
  if (!grads.ok()) return ToGrpcStatus(grads.status().Annotate("Push"));
  auto step = store_->ApplyGradients(*grads, header.increment_global_step());
  if (!step.ok()) return ToGrpcStatus(step.status().Annotate("Push"));
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
  std::lock_guard<std::mutex> lock(mu_);
  for (int w : done_workers_) response->add_done_workers(w);
  return grpc::Status::OK;
}

grpc::Status PsService::WorkerDone(grpc::ServerContext*, const proto::WorkerDoneRequest* request,
                                   proto::WorkerDoneResponse*) {
  std::lock_guard<std::mutex> lock(mu_);
  if (done_workers_.insert(request->worker()).second) {
    LOG(INFO) << "ps:" << task_index_ << " worker:" << request->worker() << " finished";
  }
  return grpc::Status::OK;
}

grpc::Status PsService::Shutdown(grpc::ServerContext*, const proto::ShutdownRequest* request,
                                 proto::ShutdownResponse*) {
  LOG(INFO) << "ps:" << task_index_ << " shutdown requested: " << request->reason();
  on_shutdown_(request->reason());
  return grpc::Status::OK;
}

}  // namespace pstrain
