#include "ps/testing/in_process_ps.h"

#include <random>

namespace pstrain {
namespace {

// How long an unbounded wait (wait == 0) may last: the gRPC client's
// default transfer timeout.
constexpr auto kDefaultWait = std::chrono::minutes(5);

}  // namespace

InProcessPs::InProcessPs(int task_index, uint64_t max_bytes)
    : name_("ps:" + std::to_string(task_index) + " (in process)"),
      store_(max_bytes),
      core_(task_index, std::random_device()(), &store_, [this](const std::string& reason) {
        MutexLock lock(&mu_);
        shutdown_reason_ = reason;
      }) {}

std::string InProcessPs::shutdown_reason() const {
  MutexLock lock(&mu_);
  return shutdown_reason_;
}

StatusOr<std::map<std::string, Tensor>> InProcessPs::Deliver(
    const NamedTensors& tensors, const TensorAssembler::Limits& limits) {
  // Through the assembler that gRPC's streams go through, chunk by chunk.
  TensorAssembler assembler(limits);
  proto::TensorChunk chunk;
  Status s;
  for (const auto& [name, tensor] : tensors) {
    ForEachChunk(name, *tensor, kDefaultChunkBytes, &chunk, [&] {
      s = assembler.Add(chunk);
      return s.ok();
    });
    PS_RETURN_IF_ERROR(s);
  }
  return assembler.Finish();
}

Status InProcessPs::Init(const proto::InitHeader& header, const NamedTensors& values) {
  Status s = core_.CheckInitHeader(header);
  if (!s.ok()) return s.Annotate(name_ + ": Init");
  auto delivered = Deliver(values, core_.InitLimits(header));
  if (!delivered.ok()) return delivered.status().Annotate(name_ + ": Init");
  return core_.Init(header, std::move(delivered).value()).Annotate(name_ + ": Init");
}

Status InProcessPs::Received(StatusOr<PsCore::PullResult> pulled,
                             std::map<std::string, Tensor>* out, int64_t* step) const {
  if (!pulled.ok()) return pulled.status().Annotate(name_ + ": Pull");
  out->clear();
  for (auto& [name, tensor] : pulled->tensors) out->emplace(name, *tensor);  // a copy, as sent
  if (step != nullptr) *step = pulled->step;
  return OkStatus();
}

Status InProcessPs::PullWithRows(uint64_t fingerprint, const std::vector<std::string>& names,
                                 const std::vector<proto::TableKeys>& lookups,
                                 std::map<std::string, Tensor>* out, int64_t* step,
                                 int64_t min_step, std::chrono::milliseconds wait) {
  // As a transport hands the core what it received.
  proto::PullRequest request;
  request.set_placement_fingerprint(fingerprint);
  for (const std::string& n : names) request.add_names(n);
  for (const proto::TableKeys& t : lookups) *request.add_lookups() = t;
  request.set_min_step(min_step);
  request.set_wait_deadline_ms(
      (wait.count() > 0 ? wait
                        : std::chrono::duration_cast<std::chrono::milliseconds>(kDefaultWait))
          .count());
  auto pulled =
      core_.Pull(request, std::chrono::system_clock::time_point::max(), [] { return false; });
  return Received(std::move(pulled), out, step);
}

Status InProcessPs::PullState(uint64_t fingerprint, std::map<std::string, Tensor>* out,
                              int64_t* step) {
  const auto deadline = std::chrono::system_clock::now() + kDefaultWait;
  return Received(core_.Pull(fingerprint, {}, true, 0, deadline, [] { return false; }), out, step);
}

StatusOr<proto::PushResponse> InProcessPs::Push(const proto::PushHeader& request,
                                                const NamedTensors& grads) {
  proto::PushHeader header = request;  // counted, as PsClient counts its stream
  header.set_num_tensors(static_cast<int32_t>(grads.size()));
  Status s = core_.CheckPushHeader(header);
  if (!s.ok()) return s.Annotate(name_ + ": Push");
  auto delivered = Deliver(grads, core_.PushLimits(header));
  if (!delivered.ok()) return delivered.status().Annotate(name_ + ": Push");
  auto pushed = core_.Push(header, std::move(delivered).value());
  if (!pushed.ok()) return pushed.status().Annotate(name_ + ": Push");
  return pushed;
}

Status InProcessPs::ExportRows(
    uint64_t fingerprint, const std::string& table, bool delta, bool start_deltas,
    const std::function<Status(const proto::ExportRowsResponse&)>& on_block) {
  proto::ExportRowsRequest request;
  request.set_placement_fingerprint(fingerprint);
  request.set_table(table);
  request.set_delta(delta);
  request.set_start_deltas(start_deltas);
  Status handled = OkStatus();
  Status exported = core_.ExportRows(request, [&](const proto::ExportRowsResponse& reply) {
    handled = on_block(reply);
    return handled.ok();
  });
  PS_RETURN_IF_ERROR(handled);
  return exported.Annotate(name_ + ": ExportRows");
}

StatusOr<proto::ImportRowsResponse> InProcessPs::ImportRows(
    uint64_t fingerprint, const std::function<bool(proto::RowBlock*)>& next) {
  proto::ImportRowsResponse response;
  proto::RowBlock block;
  while (next(&block)) {
    Status s = core_.ImportRows(fingerprint, block, &response);
    if (!s.ok()) return s.Annotate(name_ + ": ImportRows");
    block.Clear();
  }
  return response;
}

Status InProcessPs::FinishRestore(uint64_t fingerprint) {
  return core_.FinishRestore(fingerprint).Annotate(name_ + ": FinishRestore");
}

StatusOr<proto::HeartbeatResponse> InProcessPs::Heartbeat(int worker, int64_t local_step,
                                                          float loss) {
  auto beat = core_.Heartbeat(worker, local_step, loss);
  if (!beat.ok()) return beat.status().Annotate(name_ + ": Heartbeat");
  return beat;
}

StatusOr<proto::StatusResponse> InProcessPs::GetStatus(std::chrono::milliseconds) {
  return core_.GetStatus();
}

StatusOr<proto::StatusResponse> InProcessPs::GetReadiness(std::chrono::milliseconds) {
  return core_.GetStatus(/*omit_workers=*/true);
}

Status InProcessPs::WorkerDone(int worker, const std::string& failure) {
  return core_.WorkerDone(worker, failure).Annotate(name_ + ": WorkerDone");
}

Status InProcessPs::SetLiveWorkers(const std::vector<int>& workers) {
  return core_.SetLiveWorkers(workers).status().Annotate(name_ + ": SetLiveWorkers");
}

Status InProcessPs::EndTraining(const std::string& reason) {
  return core_.EndTraining(reason).Annotate(name_ + ": EndTraining");
}

Status InProcessPs::Shutdown(const std::string& reason) {
  core_.Shutdown(reason);
  return OkStatus();
}

}  // namespace pstrain
