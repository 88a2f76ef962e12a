#include "ps/ps_core.h"

#include <glog/logging.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <set>
#include <utility>

#include "ps/optimizer.h"

namespace pstrain {

uint64_t PsCore::NewIncarnation() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}
namespace {

// The longest a Pull may wait for a sync step, whatever its deadline.
constexpr auto kMaxStepWait = std::chrono::minutes(10);

}  // namespace

PsCore::PsCore(int task_index, uint64_t incarnation, VariableStore* store,
               std::function<void(const std::string&)> on_shutdown)
    : task_index_(task_index),
      incarnation_(incarnation),
      store_(store),
      on_shutdown_(std::move(on_shutdown)) {}

Status PsCore::CheckWorker(int worker) const {
  // Before Init tells the count, a bound that keeps the registry small.
  constexpr int kMaxWorkers = 1 << 16;
  const int n = num_workers_.load();
  if (worker < 0 || worker >= (n > 0 ? n : kMaxWorkers)) {
    return InvalidArgument("no worker:" + std::to_string(worker) + " in the cluster" +
                           (n > 0 ? " (" + std::to_string(n) + " workers)" : ""));
  }
  return OkStatus();
}

Status PsCore::CheckInitHeader(const proto::InitHeader& header) const {
  if (header.num_workers() < 0 || header.global_step() < 0 ||
      !(header.ema_decay() >= 0 && header.ema_decay() < 1) ||
      !(header.heartbeat_timeout_secs() >= 0 && header.heartbeat_timeout_secs() < 1e6)) {
    return InvalidArgument(
        "num_workers and global_step must be >= 0, ema_decay in [0, 1) and "
        "heartbeat_timeout_secs in [0, 1e6)");
  }
  PS_RETURN_IF_ERROR(Optimizer::Create(header.optimizer()).status());
  for (const proto::EmbeddingTableConfig& table : header.tables()) {
    if (table.name().empty() || table.dim() < 1 || table.dim() > EmbeddingTable::kMaxDim) {
      return InvalidArgument("embedding table '" + table.name() + "': dim " +
                             std::to_string(table.dim()) + " is not in [1, " +
                             std::to_string(EmbeddingTable::kMaxDim) + "]");
    }
  }
  return OkStatus();
}

Status PsCore::CheckTableKeys(const google::protobuf::RepeatedPtrField<proto::TableKeys>& tables,
                              const std::string& what) const {
  std::set<std::string> seen;
  uint64_t keys = 0;
  for (const proto::TableKeys& t : tables) {
    const std::string where = what + " of embedding table " + t.table();
    if (!seen.insert(t.table()).second) return InvalidArgument(where + ": the table comes twice");
    if (t.keys().size() % sizeof(int64_t) != 0) {
      return InvalidArgument(where + ": " + std::to_string(t.keys().size()) +
                             " bytes of keys, not a multiple of 8");
    }
    keys += t.keys().size() / sizeof(int64_t);
    if (keys > static_cast<uint64_t>(EmbeddingTable::kMaxKeysPerRequest)) {
      return InvalidArgument(
          where + ": " + std::to_string(keys) + " keys with the tables before it, more than " +
          std::to_string(EmbeddingTable::kMaxKeysPerRequest) + " in one request");
    }
    Status known = store_->TableDim(t.table()).status();
    if (!known.ok()) return known.Annotate(what + " on ps:" + std::to_string(task_index_));
  }
  return OkStatus();
}

StatusOr<std::vector<PsCore::Lookup>> PsCore::DecodeTableKeys(
    const google::protobuf::RepeatedPtrField<proto::TableKeys>& tables,
    const std::string& what) const {
  PS_RETURN_IF_ERROR(CheckTableKeys(tables, what));
  std::vector<Lookup> out;
  for (const proto::TableKeys& t : tables) {
    PS_ASSIGN_OR_RETURN(std::vector<int64_t> keys,
                        DecodeKeys(t.keys(), what + " of embedding table " + t.table()));
    Status checked = store_->CheckKeys(t.table(), keys);
    if (!checked.ok()) return checked.Annotate(what + " on ps:" + std::to_string(task_index_));
    out.emplace_back(t.table(), std::move(keys));
  }
  return out;
}

TensorAssembler::Limits PsCore::InitLimits(const proto::InitHeader& header) const {
  std::set<std::string> expected(header.variables().begin(), header.variables().end());
  auto declared = [expected = std::move(expected)](const std::string& name,
                                                   const Shape&) -> Status {
    if (expected.count(name)) return OkStatus();
    for (size_t slash = name.rfind('/'); slash != std::string::npos && slash > 0;
         slash = name.rfind('/', slash - 1)) {
      if (expected.count(name.substr(0, slash))) return OkStatus();
    }
    return InvalidArgument("tensor " + name + " is no declared variable, nor a slot of one");
  };
  return {store_->max_bytes(), std::move(declared)};
}

Status PsCore::Init(const proto::InitHeader& header, std::map<std::string, Tensor> values) {
  PS_RETURN_IF_ERROR(CheckInitHeader(header));
  PS_ASSIGN_OR_RETURN(std::unique_ptr<Optimizer> optimizer, Optimizer::Create(header.optimizer()));
  const std::set<std::string> expected(header.variables().begin(), header.variables().end());
  for (const std::string& name : expected) {
    if (!values.count(name)) return InvalidArgument("no value for " + name);
  }
  // What is not a declared variable is saved state; the store checks it
  // belongs to one.
  std::map<std::string, Tensor> state;
  for (auto it = values.begin(); it != values.end();) {
    if (expected.count(it->first)) {
      ++it;
    } else {
      state.insert(values.extract(it++));
    }
  }
  VariableStore::InitOptions options;
  options.placement_fingerprint = header.placement_fingerprint();
  options.holds_global_step = header.holds_global_step();
  options.global_step = header.global_step();
  options.sync = header.sync();
  options.ema_decay = header.ema_decay();
  options.non_trainable.insert(header.non_trainable().begin(), header.non_trainable().end());
  options.tables.assign(header.tables().begin(), header.tables().end());
  options.optimizer_config = header.optimizer();
  options.ps_name = "ps:" + std::to_string(task_index_);
  const size_t restored = state.size();
  // What was applied to the variables replaced goes with them.
  pushes_.Clear();
  // Closed before the store opens with its tables empty.
  awaiting_rows_.store(header.rows_follow());
  PS_RETURN_IF_ERROR(
      store_->Initialize(options, std::move(optimizer), std::move(values), std::move(state)));
  if (header.heartbeat_timeout_secs() > 0) {
    heartbeat_timeout_ = std::chrono::duration<double>(header.heartbeat_timeout_secs());
  }
  num_workers_ = header.num_workers();
  LOG(INFO) << "ps:" << task_index_ << " initialized " << expected.size() << " variables ("
            << store_->num_bytes() << " bytes with slots), global_step " << header.global_step()
            << (restored ? ", restored " + std::to_string(restored) + " slots and shadows" : "")
            << (header.rows_follow() ? "; the tables' rows follow" : "");
  return OkStatus();
}

Status PsCore::CheckServing(uint64_t placement_fingerprint) const {
  PS_RETURN_IF_ERROR(store_->CheckPlacement(placement_fingerprint));
  if (awaiting_rows_.load()) {
    return Unavailable("ps:" + std::to_string(task_index_) +
                       " is being restored: its embedding tables' rows are still arriving from "
                       "the checkpoint");
  }
  return OkStatus();
}

Status PsCore::FinishRestore(uint64_t placement_fingerprint) {
  PS_RETURN_IF_ERROR(store_->CheckPlacement(placement_fingerprint));
  if (awaiting_rows_.exchange(false)) {
    LOG(INFO) << "ps:" << task_index_ << " restored with its tables' rows; serving";
  }
  return OkStatus();
}

StatusOr<PsCore::PullResult> PsCore::Pull(uint64_t placement_fingerprint,
                                          const std::vector<std::string>& names, bool include_state,
                                          int64_t min_step,
                                          std::chrono::system_clock::time_point deadline,
                                          const std::function<bool()>& cancelled,
                                          const std::vector<Lookup>& lookups) {
  PS_RETURN_IF_ERROR(CheckServing(placement_fingerprint));
  if (include_state && !names.empty()) return InvalidArgument("include_state takes no names");
  if (min_step > 0) {
    // The transport's deadline is a wall-clock time; the store waits on its
    // own clock for what is left of it.
    const auto left = std::min<std::chrono::system_clock::duration>(
        deadline - std::chrono::system_clock::now(), kMaxStepWait);
    ++waiting_pulls_;
    Status s = store_->WaitForStep(
        min_step, std::chrono::duration_cast<Clock::Duration>(std::max(left, left.zero())),
        cancelled);
    --waiting_pulls_;
    if (!s.ok()) return s.Annotate("ps:" + std::to_string(task_index_));
  }
  PullResult result;
  result.step = store_->global_step();
  if (!include_state) {
    PS_ASSIGN_OR_RETURN(result.tensors, store_->ReadShared(names));
    for (const auto& [table, keys] : lookups) {
      PS_ASSIGN_OR_RETURN(Tensor rows, store_->ReadRows(table, keys));
      result.tensors.emplace_back(table, std::make_shared<const Tensor>(std::move(rows)));
    }
    return result;
  }
  PS_ASSIGN_OR_RETURN(auto state, store_->ReadState());
  for (auto& [name, t] : state) {
    result.tensors.emplace_back(name, std::make_shared<const Tensor>(std::move(t)));
  }
  return result;
}

StatusOr<std::chrono::system_clock::time_point> PsCore::CheckPullRequest(
    const proto::PullRequest& request,
    std::chrono::system_clock::time_point transport_deadline) const {
  auto deadline = transport_deadline;
  if (request.min_step() > 0 && request.wait_deadline_ms() <= 0 &&
      transport_deadline == std::chrono::system_clock::time_point::max()) {
    // A wait nobody bounds would hold its connection until kMaxStepWait
    // after its caller has gone.
    return InvalidArgument("Pull: a wait for step " + std::to_string(request.min_step()) +
                           " needs a deadline (wait_deadline_ms)");
  }
  if (request.wait_deadline_ms() > 0) {
    // Bounded first, so that no request's number overflows the clock.
    const auto wait = std::min<std::chrono::milliseconds>(
        std::chrono::milliseconds(request.wait_deadline_ms()), kMaxStepWait);
    deadline = std::min(deadline, std::chrono::system_clock::now() + wait);
  }
  if (request.include_state() && request.lookups_size() > 0) {
    return InvalidArgument("Pull: include_state takes no lookups");
  }
  if (request.include_state() && request.names_size() > 0) {
    return InvalidArgument("include_state takes no names");
  }
  PS_RETURN_IF_ERROR(CheckServing(request.placement_fingerprint()));
  return deadline;
}

StatusOr<PsCore::PullResult> PsCore::Pull(const proto::PullRequest& request,
                                          std::chrono::system_clock::time_point transport_deadline,
                                          const std::function<bool()>& cancelled) {
  PS_ASSIGN_OR_RETURN(const auto deadline, CheckPullRequest(request, transport_deadline));
  PS_ASSIGN_OR_RETURN(std::vector<Lookup> lookups, DecodeTableKeys(request.lookups(), "Pull"));
  return Pull(request.placement_fingerprint(), {request.names().begin(), request.names().end()},
              request.include_state(), request.min_step(), deadline, cancelled, lookups);
}

StatusOr<uint64_t> PsCore::AwaitPullable(const proto::PullRequest& request,
                                         std::chrono::system_clock::time_point transport_deadline,
                                         StepWaiters::Ready ready) {
  PS_ASSIGN_OR_RETURN(const auto deadline, CheckPullRequest(request, transport_deadline));
  // Refused now rather than after the wait.
  PS_RETURN_IF_ERROR(DecodeTableKeys(request.lookups(), "Pull").status());
  if (request.min_step() <= 0) return 0;
  const auto left = std::min<std::chrono::system_clock::duration>(
      deadline - std::chrono::system_clock::now(), kMaxStepWait);
  ++waiting_pulls_;
  const uint64_t id = store_->WhenStep(
      request.min_step(), std::chrono::duration_cast<Clock::Duration>(std::max(left, left.zero())),
      [this, ready = std::move(ready)](const Status& s) {
        --waiting_pulls_;
        ready(s.ok() ? s : s.Annotate("ps:" + std::to_string(task_index_) + ": Pull"));
      });
  if (id == 0) --waiting_pulls_;
  return id;
}

Status PsCore::CheckPushHeader(const proto::PushHeader& header) const {
  PS_RETURN_IF_ERROR(CheckServing(header.placement_fingerprint()));
  PS_RETURN_IF_ERROR(CheckWorker(header.worker()));
  if (header.num_tensors() < 0 ||
      header.num_tensors() > store_->num_variables() + header.sparse_size()) {
    return InvalidArgument("num_tensors " + std::to_string(header.num_tensors()) +
                           ", but this ps holds " + std::to_string(store_->num_variables()) +
                           " variables and the push names " + std::to_string(header.sparse_size()) +
                           " tables");
  }
  // The keys themselves are checked once the push is whole (Push).
  return CheckTableKeys(header.sparse(), "Push");
}

TensorAssembler::Limits PsCore::PushLimits(const proto::PushHeader& header) const {
  // Each table's rows: as many as its keys (checked by CheckPushHeader).
  std::map<std::string, int64_t> rows;
  for (const proto::TableKeys& t : header.sparse()) {
    rows[t.table()] = static_cast<int64_t>(t.keys().size() / sizeof(int64_t));
  }
  return {store_->max_bytes(),
          [this, rows = std::move(rows)](const std::string& name, const Shape& shape) -> Status {
            auto it = rows.find(name);
            if (it == rows.end()) return store_->CheckGradient(name, shape);
            PS_ASSIGN_OR_RETURN(int dim, store_->TableDim(name));
            if (shape != Shape{it->second, dim}) {
              return InvalidArgument("rows for embedding table " + name + " have shape " +
                                     ShapeString(shape) + ", but " + std::to_string(it->second) +
                                     " keys of dim " + std::to_string(dim) + " need " +
                                     ShapeString({it->second, dim}));
            }
            return OkStatus();
          }};
}

StatusOr<proto::PushResponse> PsCore::Push(const proto::PushHeader& header,
                                           std::map<std::string, Tensor> grads,
                                           ClientMemory client) {
  PS_RETURN_IF_ERROR(CheckPushHeader(header));
  PS_ASSIGN_OR_RETURN(const PushLedger::Ticket ticket, pushes_.Begin(header));
  if (ticket.repeat) {
    repeated_pushes_.fetch_add(1);
    proto::PushResponse answer = ticket.answer;
    answer.set_values_in_arena(false);  // written for the first, not now
    return answer;
  }
  auto applied = ApplyPush(header, std::move(grads), client);
  pushes_.End(ticket, applied);
  return applied;
}

void PsCore::set_drop_push_reply(std::function<bool(const proto::PushHeader&)> drop) {
  MutexLock lock(&faults_mu_);
  drop_push_reply_ = std::move(drop);
}

bool PsCore::DropPushReply(const proto::PushHeader& header) const {
  MutexLock lock(&faults_mu_);
  return drop_push_reply_ && drop_push_reply_(header);
}

StatusOr<DenseVariables::ValueCopies> PsCore::RoomsIn(const proto::PushHeader& header,
                                                      const std::map<std::string, Tensor>& grads,
                                                      ClientMemory client) {
  DenseVariables::ValueCopies copies;
  for (const auto& [name, room] : header.arena_rooms()) {
    const auto grad = grads.find(name);
    const std::string what = "worker:" + std::to_string(header.worker()) + "'s arena room for " +
                             name + " (offset " + std::to_string(room.offset()) + ", " +
                             std::to_string(room.bytes()) + " bytes)";
    if (grad == grads.end()) {
      return InvalidArgument(what + ": not a variable of this push; nothing applied");
    }
    if (room.bytes() != grad->second.bytes() || room.offset() % sizeof(float) != 0 ||
        room.offset() > client.bytes || room.bytes() > client.bytes - room.offset()) {
      return InvalidArgument(what + ": not " + std::to_string(grad->second.bytes()) +
                             " float-aligned bytes inside its " + std::to_string(client.bytes) +
                             "-byte arena; nothing applied");
    }
    copies[name] = reinterpret_cast<float*>(client.data + room.offset());
  }
  // Rooms apart from each other and from the gradients in the same memory,
  // which the update reads while it writes the rooms: only the client's
  // memory could suffer, but the ps's two threads would race on it.
  struct Span {
    const char* begin;
    const char* end;
    std::string what;
  };
  std::vector<Span> spans;
  for (const auto& [name, to] : copies) {
    const char* begin = reinterpret_cast<const char*>(to);
    spans.push_back({begin, begin + grads.at(name).bytes(), "the arena room for " + name});
  }
  for (const auto& [name, grad] : grads) {
    const char* begin = reinterpret_cast<const char*>(grad.data());
    if (begin >= client.data && begin < client.data + client.bytes) {
      spans.push_back({begin, begin + grad.bytes(), "the gradient of " + name});
    }
  }
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
    return a.begin < b.begin || (a.begin == b.begin && a.end < b.end);
  });
  const Span* furthest = nullptr;  // of the spans before, the one that ends last
  for (const Span& span : spans) {
    if (span.begin == span.end) continue;  // empty: overlaps nothing
    if (furthest != nullptr && span.begin < furthest->end) {
      return InvalidArgument("worker:" + std::to_string(header.worker()) + ": " + furthest->what +
                             " overlaps " + span.what + " in its arena; nothing applied");
    }
    if (furthest == nullptr || span.end > furthest->end) furthest = &span;
  }
  return copies;
}

StatusOr<std::map<std::string, SparseRows>> PsCore::TakeTableRows(
    const proto::PushHeader& header, std::map<std::string, Tensor>* grads) const {
  // The tables' rows, each with its keys, repeated keys summed (TF's
  // optimizers deduplicate an IndexedSlices gradient so).
  PS_ASSIGN_OR_RETURN(std::vector<Lookup> tables, DecodeTableKeys(header.sparse(), "Push"));
  std::map<std::string, SparseRows> sparse;
  for (auto& [table, keys] : tables) {
    auto it = grads->find(table);
    if (it == grads->end()) {
      return InvalidArgument("worker:" + std::to_string(header.worker()) +
                             " sent keys but no rows for embedding table " + table +
                             "; nothing applied");
    }
    SparseRows& rows = sparse[table];
    // Kept by each serving thread from push to push: a step's keys are
    // found in an index already grown to them, and in the cache.
    thread_local KeyIndex seen;
    UniqueKeys unique;
    Unique(keys.data(), static_cast<int64_t>(keys.size()), &seen, &unique);
    if (unique.keys.size() != keys.size()) {
      const int64_t dim = it->second.rank() == 2 ? it->second.dim(1) : 0;
      rows = SumDuplicates(std::move(unique), it->second.data(), dim);
    } else {
      rows.keys = std::move(keys);
      rows.rows = std::move(it->second);
    }
    grads->erase(it);
  }
  return sparse;
}

StatusOr<proto::PushResponse> PsCore::ApplyPush(const proto::PushHeader& header,
                                                std::map<std::string, Tensor> grads,
                                                ClientMemory client) {
  if (grads.size() != static_cast<size_t>(header.num_tensors())) {
    return InvalidArgument("worker:" + std::to_string(header.worker()) + " sent " +
                           std::to_string(grads.size()) + " of " +
                           std::to_string(header.num_tensors()) + " gradients; nothing applied");
  }
  using TableRows = std::map<std::string, SparseRows>;
  PS_ASSIGN_OR_RETURN(TableRows sparse, TakeTableRows(header, &grads));
  proto::PushResponse response;
  if (store_->sync_enabled()) {
    // The accumulator keeps them past this call: views of a transport's
    // memory (shared memory, TensorAssembler::PlaceView) become copies.
    for (auto& [name, grad] : grads) {
      if (!grad.owns_data()) grad = Tensor(grad);
    }
    for (auto& [name, rows] : sparse) {
      if (!rows.rows.owns_data()) rows.rows = Tensor(rows.rows);
    }
    PS_ASSIGN_OR_RETURN(VariableStore::SyncPushResult r,
                        store_->OfferSyncGradients(header.worker(), header.computed_at_step(),
                                                   std::move(grads), std::move(sparse)));
    response.set_outcome(r.outcome);
    response.set_global_step(r.step);
    if (header.local_step() > 0) workers_.Heartbeat(header.worker(), header.local_step());
    return response;
  }
  DenseVariables::ValueCopies copies;
  if (client.data != nullptr) {
    PS_ASSIGN_OR_RETURN(copies, RoomsIn(header, grads, client));
  }
  if (header.local_step() > 0) workers_.Heartbeat(header.worker(), header.local_step());
  PS_ASSIGN_OR_RETURN(int64_t step,
                      store_->ApplyGradients(grads, header.increment_global_step(),
                                             header.computed_at_step(), sparse, copies));
  response.set_outcome(proto::APPLIED);
  response.set_global_step(step);
  response.set_values_in_arena(!copies.empty());
  return response;
}

Status PsCore::ExportRows(
    const proto::ExportRowsRequest& request,
    const std::function<bool(const proto::ExportRowsResponse&)>& write) const {
  PS_RETURN_IF_ERROR(store_->CheckPlacement(request.placement_fingerprint()));
  PS_ASSIGN_OR_RETURN(std::vector<std::string> slots, store_->TableSlots(request.table()));
  PS_ASSIGN_OR_RETURN(int dim, store_->TableDim(request.table()));
  const int64_t row_floats = int64_t{dim} * static_cast<int64_t>(1 + slots.size());
  // At most what ImportRows takes in one block.
  const int64_t rows_per_block = std::clamp<int64_t>(kExportBlockBytes / (8 + 4 * row_floats), 1,
                                                     EmbeddingTable::kMaxKeysPerRowBlock);
  if (request.start_deltas()) PS_RETURN_IF_ERROR(store_->StartTableDeltas(request.table()));
  proto::ExportRowsResponse reply;
  reply.set_dim(dim);
  for (const std::string& s : slots) reply.add_slot_names(s);
  reply.set_global_step(store_->global_step());
  int64_t next = 0;
  do {
    EmbeddingTable::RowBlock rows;
    PS_ASSIGN_OR_RETURN(
        next, store_->ReadTableRows(request.table(), next, rows_per_block, request.delta(), &rows));
    PS_ASSIGN_OR_RETURN(const int64_t end, store_->TableRowEnd(request.table()));
    proto::RowBlock* block = reply.mutable_block();
    block->set_table(request.table());
    block->set_keys(EncodeKeys(rows.keys));
    block->set_values(std::string(reinterpret_cast<const char*>(rows.values.data()),
                                  rows.values.size() * sizeof(float)));
    if (!rows.keys.empty() || next >= end) {
      if (!write(reply)) return Status(Code::kCancelled, "ExportRows: the caller went away");
      reply.Clear();
    }
    if (next >= end) break;
  } while (true);
  if (!request.delta()) return OkStatus();
  PS_ASSIGN_OR_RETURN(std::vector<int64_t> dropped, store_->TableDroppedKeys(request.table()));
  const size_t per_block = static_cast<size_t>(EmbeddingTable::kMaxKeysPerRowBlock);
  for (size_t first = 0; first < dropped.size(); first += per_block) {
    proto::RowBlock* block = reply.mutable_block();
    block->set_table(request.table());
    block->set_erase(true);
    block->set_keys(EncodeKeys(
        {dropped.begin() + first, dropped.begin() + std::min(dropped.size(), first + per_block)}));
    if (!write(reply)) return Status(Code::kCancelled, "ExportRows: the caller went away");
    reply.Clear();
  }
  return OkStatus();
}

Status PsCore::ImportRows(uint64_t placement_fingerprint, const proto::RowBlock& block,
                          proto::ImportRowsResponse* response) {
  PS_RETURN_IF_ERROR(store_->CheckPlacement(placement_fingerprint));
  const std::string where = "ImportRows of embedding table " + block.table();
  if (block.keys().size() / sizeof(int64_t) >
      static_cast<uint64_t>(EmbeddingTable::kMaxKeysPerRowBlock)) {
    return InvalidArgument(where + ": more than " +
                           std::to_string(EmbeddingTable::kMaxKeysPerRowBlock) + " keys a block");
  }
  PS_ASSIGN_OR_RETURN(std::vector<int64_t> keys, DecodeKeys(block.keys(), where));
  if (block.erase()) {
    PS_ASSIGN_OR_RETURN(int64_t erased, store_->EraseTableRows(block.table(), keys));
    response->set_erased(response->erased() + erased);
    return OkStatus();
  }
  EmbeddingTable::RowBlock rows;
  rows.keys = std::move(keys);
  if (block.values().size() % sizeof(float) != 0) {
    return InvalidArgument(where + ": values are not a whole number of floats");
  }
  rows.values.resize(block.values().size() / sizeof(float));
  if (!rows.values.empty()) {
    std::memcpy(rows.values.data(), block.values().data(), block.values().size());
  }
  PS_RETURN_IF_ERROR(store_->WriteTableRows(block.table(), rows)
                         .Annotate(where + " on ps:" + std::to_string(task_index_)));
  response->set_rows(response->rows() + static_cast<int64_t>(rows.keys.size()));
  return OkStatus();
}

proto::StatusResponse PsCore::GetStatus(bool omit_workers) const {
  proto::StatusResponse response;
  response.set_task_index(task_index_);
  response.set_incarnation(incarnation_);
  response.set_ready(store_->ready() && !awaiting_rows_.load());
  response.set_placement_fingerprint(store_->placement_fingerprint());
  response.set_holds_global_step(store_->holds_global_step());
  response.set_global_step(store_->global_step());
  response.set_num_variables(store_->num_variables());
  {
    MutexLock lock(&ended_mu_);
    response.set_training_ended(ended_reason_);
  }
  response.set_num_bytes(store_->num_bytes());
  response.set_learning_rate(store_->learning_rate());
  const VariableStore::SyncStats sync = store_->sync_stats();
  response.set_pending_gradients(sync.pending);
  response.set_required_gradients(sync.required);
  response.set_stale_dropped(sync.stale_dropped);
  response.set_duplicates_dropped(sync.duplicates_dropped);
  for (const VariableStore::TableStats& t : store_->table_stats()) {
    proto::TableState* ts = response.add_tables();
    ts->set_name(t.name);
    ts->set_rows(t.stats.rows);
    ts->set_bytes(t.stats.bytes);
    ts->set_admitted(t.stats.admitted);
    ts->set_expired(t.stats.expired);
    ts->set_pending_keys(t.stats.pending_keys);
  }
  response.set_rows_refused(store_->rows_refused());
  if (omit_workers) return response;
  for (const WorkerRegistry::WorkerState& w : workers_.Snapshot()) {
    proto::WorkerState* ws = response.add_workers();
    ws->set_worker(w.worker);
    ws->set_seconds_since_heartbeat(w.seconds_since_heartbeat);
    ws->set_local_step(w.local_step);
    ws->set_done(w.done);
    ws->set_loss(w.loss);
    ws->set_failure(w.failure);
    if (w.done) response.add_done_workers(w.worker);
  }
  return response;
}

Status PsCore::WorkerDone(int worker, const std::string& failure) {
  PS_RETURN_IF_ERROR(CheckWorker(worker));
  if (failure.size() > kMaxReasonBytes) {
    return InvalidArgument("a worker's failure of over " + std::to_string(kMaxReasonBytes) +
                           " bytes");
  }
  workers_.MarkDone(worker, failure);
  if (failure.empty()) {
    LOG(INFO) << "ps:" << task_index_ << " worker:" << worker << " finished";
  } else {
    LOG(ERROR) << "ps:" << task_index_ << " worker:" << worker << " failed: " << failure;
  }
  return OkStatus();
}

StatusOr<int64_t> PsCore::SetLiveWorkers(const std::vector<int>& workers) {
  std::set<int> distinct;
  for (int w : workers) {
    PS_RETURN_IF_ERROR(CheckWorker(w));
    if (!distinct.insert(w).second) {
      return InvalidArgument("worker:" + std::to_string(w) + " named twice");
    }
  }
  const int live = static_cast<int>(workers.size());
  PS_ASSIGN_OR_RETURN(int64_t step, store_->SetLiveReplicas(live));
  std::string names;
  for (int w : workers) names += (names.empty() ? "" : ", ") + ("worker:" + std::to_string(w));
  LOG(INFO) << "ps:" << task_index_ << " at step " << step << ": " << live
            << " workers can still push" << (names.empty() ? "" : " (" + names + ")")
            << "; a step needs " << store_->sync_stats().required << " gradients";
  return step;
}

StatusOr<proto::HeartbeatResponse> PsCore::Heartbeat(int worker, int64_t local_step, float loss) {
  PS_RETURN_IF_ERROR(CheckWorker(worker));
  workers_.Heartbeat(worker, local_step, loss);
  proto::HeartbeatResponse response;
  response.set_global_step(store_->global_step());
  response.set_min_live_local_step(workers_.MinLiveLocalStep(heartbeat_timeout_));
  MutexLock lock(&ended_mu_);
  response.set_training_ended(ended_reason_);
  return response;
}

Status PsCore::EndTraining(const std::string& reason) {
  if (reason.empty() || reason.size() > kMaxReasonBytes) {
    return InvalidArgument("EndTraining: the reason must be 1 to " +
                           std::to_string(kMaxReasonBytes) + " bytes, got " +
                           std::to_string(reason.size()));
  }
  MutexLock lock(&ended_mu_);
  if (ended_reason_.empty()) {
    ended_reason_ = reason;
    LOG(INFO) << "ps:" << task_index_ << " training ended by the chief: " << reason;
  }
  return OkStatus();
}

void PsCore::Shutdown(const std::string& reason) {
  LOG(INFO) << "ps:" << task_index_ << " shutdown requested: " << reason;
  on_shutdown_(reason);
}

}  // namespace pstrain
