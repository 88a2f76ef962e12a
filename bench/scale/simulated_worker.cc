#include "bench/scale/simulated_worker.h"

#include <algorithm>
#include <thread>
#include <utility>

#include <glog/logging.h>

#include "ps/rpc/ps_connections.h"
#include "worker/heartbeat_sender.h"

namespace pstrain {
namespace bench {

namespace {

// The ps tasks at 127.0.X.Y, an address of worker w's own.
cluster::ClusterSpec SpecForWorker(const std::vector<int>& ports, int w) {
  const std::string host =
      "127.0." + std::to_string(1 + w / 250) + "." + std::to_string(2 + w % 250);
  cluster::ClusterSpec spec;
  for (int port : ports) spec.jobs["ps"].push_back(host + ":" + std::to_string(port));
  return spec;
}

// A simulated worker stands for one on a host of its own: its tensors go
// over TCP, never through shared memory with the ps (which only a task on
// the ps's host has, and which the ps would count in its memory).
PsClientOptions RemoteWorker() {
  PsClientOptions options;
  options.shared_memory = false;
  return options;
}

}  // namespace

void WorkerTally::Count(const Status& s) {
  std::lock_guard<std::mutex> lock(mu_);
  if (++errors_[CodeName(s.code())] == 1) examples_[CodeName(s.code())] = s.message();
}

void WorkerTally::Cycle(std::chrono::duration<double> seconds) {
  if (!measuring.load()) return;
  std::lock_guard<std::mutex> lock(mu_);
  cycles_ms_.push_back(seconds.count() * 1e3);
}

std::map<std::string, int64_t> WorkerTally::errors() const {
  std::lock_guard<std::mutex> lock(mu_);
  return errors_;
}

std::map<std::string, std::string> WorkerTally::examples() const {
  std::lock_guard<std::mutex> lock(mu_);
  return examples_;
}

std::vector<double> WorkerTally::TakeCycles() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::move(cycles_ms_);
}

SimulatedWorker::SimulatedWorker(const Options& options, const std::vector<int>& ps_ports,
                                 const PsFleet::Layout& layout, WorkerTally* tally)
    : options_(options),
      fleet_(ConnectFleet(SpecForWorker(ps_ports, options.index), layout, RemoteWorker(),
                          /*trainer=*/true)),
      tally_(tally) {
  grads_ = fleet_->VariableBuffers();
  for (Tensor& g : grads_) g.Fill(1.0f / 1024);
  if (!layout.tables.empty()) {
    const proto::EmbeddingTableConfig& table = layout.tables[0];
    tables_.resize(1);
    tables_[0].table = table.name();
    tables_[0].dim = table.dim();
    ranks_ = std::make_unique<PowerLawRanks>(table.vocabulary_size(), options.zipf_s,
                                             static_cast<uint64_t>(options.index));
  }
}

void SimulatedWorker::DrawIds() {
  std::vector<int64_t> ids(options_.ids_per_step);
  for (int64_t& id : ids) id = ranks_->Next();
  PsFleet::TableStep& t = tables_[0];
  t.ids = Unique(ids.data(), static_cast<int64_t>(ids.size()));
  const Status sharded = fleet_->Shard(&tables_);
  CHECK(sharded.ok()) << sharded.ToString();  // the bench's ids per step fit a request
  row_grads_.assign(1, Tensor({static_cast<int64_t>(t.ids.keys.size()), t.dim}));
  row_grads_[0].Fill(1.0f / 1024);
}

void SimulatedWorker::Run() {
  Status ready = fleet_->WaitForPs(/*require_ready=*/true, nullptr, std::chrono::seconds(600));
  if (!ready.ok()) {
    tally_->Count(ready);
    return;
  }
  HeartbeatSender heartbeat(fleet_->client(0), options_.index, std::chrono::seconds(1));
  std::vector<Tensor> params = fleet_->VariableBuffers();
  PsFleet::PsSteps steps;
  int64_t min_step = 0, local_step = 0;
  bool pulled_once = false, stepped = false;
  auto cycle_start = std::chrono::steady_clock::now();
  while (!tally_->stop.load()) {
    if (ranks_ != nullptr) DrawIds();
    Status pulled = fleet_->PullVariablesAndRows(&params, &tables_, &steps,
                                                 options_.sync ? min_step : 0, options_.pull_wait);
    if (!pulled.ok()) {
      // A sync step the stopped workers no longer complete is no failure.
      if (!tally_->stop.load()) tally_->Count(pulled);
      // As a worker's Trainer does: a wait that ran out waits again for
      // the same step; after any other failure the next pull takes
      // whatever step the ps is at (a restore may have moved it back).
      if (pulled.code() != Code::kDeadlineExceeded) min_step = 0;
      continue;
    }
    if (!pulled_once) {
      pulled_once = true;
      tally_->pulled.fetch_add(1);
    }
    if (options_.compute.count() > 0) std::this_thread::sleep_for(options_.compute);
    auto pushed = fleet_->PushGradientsAndRows(grads_, tables_, row_grads_, options_.index,
                                               ++local_step, steps, options_.sync);
    if (!pushed.ok()) {
      if (!tally_->stop.load()) tally_->Count(pushed.status());
      min_step = 0;
      continue;
    }
    heartbeat.set_local_step(local_step);
    tally_->pushes.fetch_add(1);
    if (!tables_.empty()) tally_->rows.fetch_add(static_cast<int64_t>(tables_[0].ids.keys.size()));
    if (!stepped) {
      stepped = true;
      tally_->stepped.fetch_add(1);
    }
    const auto now = std::chrono::steady_clock::now();
    tally_->Cycle(now - cycle_start);
    cycle_start = now;
    min_step = *std::min_element(steps.begin(), steps.end()) + 1;
  }
  heartbeat.Stop();
  const Status done = fleet_->client(0)->WorkerDone(options_.index, "");
  if (!done.ok()) tally_->Count(done);
}

}  // namespace bench
}  // namespace pstrain
