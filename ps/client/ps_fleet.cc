#include "ps/client/ps_fleet.h"

#include <glog/logging.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "cluster/key_partition.h"
#include "core/copy_row.h"
#include "core/jitter.h"
#include "ps/client/ps_fleet_streams.h"
#include "ps/client/shard_rows.h"
#include "ps/embedding/embedding_table.h"

namespace pstrain {
StatusOr<PsFleet::Layout> PsFleet::Place(int num_ps, std::vector<cluster::VariableInfo> infos,
                                         std::set<std::string> non_trainable,
                                         const cluster::PlacementOptions& options) {
  PS_ASSIGN_OR_RETURN(auto placement, cluster::ComputePlacement(infos, num_ps, options.strategy,
                                                                options.min_slice_bytes));
  return Layout{std::move(infos), std::move(placement), std::move(non_trainable), {}};
}

namespace {

// A random nonzero number: another for every fleet, so a restarted worker's
// pushes never pass for its last life's.
uint64_t NewIncarnation() {
  std::random_device device;
  std::mt19937_64 rng(
      (uint64_t{device()} << 32) ^ device() ^
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  uint64_t n = 0;
  while (n == 0) n = rng();
  return n;
}

}  // namespace

PsFleet::PsFleet(std::vector<std::unique_ptr<PsConnection>> connections, Layout layout,
                 std::unique_ptr<TensorMemory> memory)
    : variables_(std::move(layout.variables)),
      non_trainable_(std::move(layout.non_trainable)),
      tables_(std::move(layout.tables)),
      incarnation_(NewIncarnation()),
      placement_(std::move(layout.placement)),
      clients_(std::move(connections)),
      memory_(std::move(memory)),
      fan_out_(std::max(1, static_cast<int>(clients_.size()) - 1), std::chrono::seconds(60)) {
  for (int i = 0; i < num_ps(); ++i) shards_by_ps_.push_back(placement_.ShardsOnPs(i));
}

Status PsFleet::ForEachPs(const std::function<Status(int)>& fn) {
  struct Outcomes {
    std::mutex mu;
    std::condition_variable done;
    std::vector<Status> of_ps;
    int left = 0;
  } outcomes;
  outcomes.of_ps.resize(num_ps());
  outcomes.left = num_ps() - 1;
  for (int ps = 1; ps < num_ps(); ++ps) {
    fan_out_.Submit([&outcomes, &fn, ps] {
      Status s = fn(ps);
      std::lock_guard<std::mutex> lock(outcomes.mu);
      outcomes.of_ps[ps] = std::move(s);
      if (--outcomes.left == 0) outcomes.done.notify_all();
    });
  }
  outcomes.of_ps[0] = fn(0);
  std::unique_lock<std::mutex> lock(outcomes.mu);
  outcomes.done.wait(lock, [&] { return outcomes.left == 0; });
  for (const Status& s : outcomes.of_ps) {
    if (!s.ok()) return s;
  }
  return OkStatus();
}

Status PsFleet::WaitForPs(bool require_ready, const StopNotice* stop,
                          std::chrono::seconds timeout) {
  const auto start = std::chrono::steady_clock::now();
  auto last_log = start - std::chrono::hours(1);
  std::string logged;  // what the last line said we wait for
  std::chrono::milliseconds poll(200);
  // A ps found ready is not asked again, so a thousand workers waiting for
  // sixteen ps tasks ask each one about once after it is up.
  std::vector<bool> confirmed(num_ps(), false);
  for (;;) {
    std::string waiting;
    for (int ps = 0; ps < num_ps(); ++ps) {
      if (confirmed[ps]) continue;
      auto st = clients_[ps]->GetReadiness(std::chrono::seconds(2));
      if (!st.ok()) {
        waiting = clients_[ps]->name() + " to answer (" + st.status().message() + ")";
      } else if (require_ready && !st->ready()) {
        waiting = clients_[ps]->name() + " to be initialized by the chief";
      } else if (require_ready && st->placement_fingerprint() != placement_.fingerprint) {
        std::ostringstream fingerprints;
        fingerprints << std::hex << st->placement_fingerprint() << ", this task's "
                     << placement_.fingerprint;
        return FailedPrecondition(clients_[ps]->name() +
                                  " holds variables under another placement (fingerprint " +
                                  fingerprints.str() +
                                  "); do all tasks use the same model, optimizer and "
                                  "placement flags?");
      }
      if (!waiting.empty()) break;
      confirmed[ps] = true;
    }
    if (waiting.empty()) return OkStatus();
    const auto now = std::chrono::steady_clock::now();
    // A new reason at once (after 5 s), the same one again every 30 s.
    if (now - last_log >= std::chrono::seconds(waiting == logged ? 30 : 5)) {
      LOG(INFO) << (waiting == logged ? "still waiting (" : "waiting (")
                << std::chrono::duration_cast<std::chrono::seconds>(now - start).count()
                << " s) for " << waiting;
      last_log = now;
      logged = waiting;
    }
    if (now - start >= timeout) return DeadlineExceeded("gave up waiting for " + waiting);
    if (stop != nullptr && stop->requested())
      return Aborted("stopped while waiting for " + waiting);
    // Polls spread out as the wait goes on: a thousand tasks waiting for
    // one ps ask it a few hundred times a second, not thousands.
    std::this_thread::sleep_for(Jittered(poll));
    poll = std::min<std::chrono::milliseconds>(poll * 3 / 2, std::chrono::seconds(2));
  }
}

bool PsFleet::PushResult::any(proto::PushOutcome o) const {
  for (proto::PushOutcome x : outcomes) {
    if (x == o) return true;
  }
  return false;
}

Status PsFleet::InitVariables(const std::vector<Tensor>& values, const proto::InitHeader& header) {
  State state;
  for (size_t i = 0; i < variables_.size(); ++i) state.emplace(variables_[i].name, values[i]);
  return RestoreState(state, header);
}

Status PsFleet::RestoreState(const State& state, const proto::InitHeader& common,
                             const std::vector<int>& which) {
  for (const auto& v : variables_) {
    auto it = state.find(v.name);
    if (it == state.end()) return InvalidArgument("no value for variable " + v.name);
    if (it->second.shape() != v.shape) {
      return InvalidArgument("value for " + v.name + " has shape " +
                             ShapeString(it->second.shape()) + ", the model wants " +
                             ShapeString(v.shape));
    }
  }
  std::vector<bool> selected(num_ps(), which.empty());
  for (int ps : which) selected[ps] = true;
  return ForEachPs([&](int ps) {
    if (!selected[ps]) return OkStatus();
    proto::InitHeader header = common;
    header.set_placement_fingerprint(placement_.fingerprint);
    header.set_holds_global_step(ps == 0);
    header.clear_variables();
    header.clear_non_trainable();
    header.clear_tables();
    for (proto::EmbeddingTableConfig table : tables_) {
      table.set_num_shards(num_ps());
      table.set_shard(ps);
      *header.add_tables() = std::move(table);
    }
    std::vector<Tensor> slices;
    NamedTensors named;
    // Every tensor of a variable (value, slots, shadow) is cut like the value.
    auto add = [&](const cluster::Shard& shard, const std::string& suffix, const Tensor& whole) {
      slices.push_back(SliceRows(whole, shard));
      named.emplace_back(shard.name + suffix, nullptr);
    };
    for (const cluster::Shard* shard : shards_by_ps_[ps]) {
      header.add_variables(shard->name);
      const std::string& var = shard->variable;
      if (non_trainable_.count(var)) header.add_non_trainable(shard->name);
      for (auto it = state.lower_bound(var); it != state.end(); ++it) {
        if (it->first == var) {
          add(*shard, "", it->second);
        } else if (it->first.compare(0, var.size() + 1, var + "/") == 0 &&
                   it->second.shape() == state.at(var).shape()) {
          add(*shard, it->first.substr(var.size()), it->second);
        } else if (it->first.compare(0, var.size(), var) != 0) {
          break;
        }
      }
    }
    for (size_t i = 0; i < named.size(); ++i) named[i].second = &slices[i];
    return clients_[ps]->Init(header, named);
  });
}

Status PsFleet::ExportTable(
    const std::string& table, bool delta, bool start_deltas,
    const std::function<Status(const proto::ExportRowsResponse&)>& on_reply) {
  for (int ps = 0; ps < num_ps(); ++ps) {
    PS_RETURN_IF_ERROR(
        clients_[ps]->ExportRows(placement_.fingerprint, table, delta, start_deltas, on_reply));
  }
  return OkStatus();
}

namespace {

// The blocks one ps's ImportRows stream sends, handed over from the thread
// that reads the table: at most kDepth wait, so memory stays bounded
// whatever the table's size.
class RowFeed {
 public:
  // Waits for room; false when the stream has ended (its blocks are of
  // no use any more).
  bool Put(proto::RowBlock block) {
    std::unique_lock<std::mutex> lock(mu_);
    room_.wait(lock, [&] { return blocks_.size() < kDepth || ended_; });
    if (ended_) return false;
    blocks_.push_back(std::move(block));
    ready_.notify_one();
    return true;
  }
  // No more blocks will come.
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    ready_.notify_one();
  }
  // The stream's side: the next block, false once closed and drained.
  bool Take(proto::RowBlock* block) {
    std::unique_lock<std::mutex> lock(mu_);
    ready_.wait(lock, [&] { return !blocks_.empty() || closed_; });
    if (blocks_.empty()) return false;
    *block = std::move(blocks_.front());
    blocks_.pop_front();
    room_.notify_one();
    return true;
  }
  // The stream is over (done or failed): Put gives up.
  void End() {
    std::lock_guard<std::mutex> lock(mu_);
    ended_ = true;
    room_.notify_all();
  }

 private:
  static constexpr size_t kDepth = 8;
  std::mutex mu_;
  std::condition_variable room_, ready_;
  std::deque<proto::RowBlock> blocks_;
  bool closed_ = false, ended_ = false;
};

}  // namespace

namespace {

// Appends each row of `in` to the part for the ps that holds its key (of
// those selected), handing a part to `send` once it holds
// EmbeddingTable::kMaxKeysPerRowBlock keys; false once `send` is.
bool SplitRows(const proto::RowBlock& in, const std::vector<bool>& selected,
               std::vector<proto::RowBlock>* parts, const std::function<bool(int)>& send) {
  const int num_ps = static_cast<int>(parts->size());
  const int64_t in_rows = static_cast<int64_t>(in.keys().size() / sizeof(int64_t));
  const int64_t row_bytes =
      in.erase() || in_rows == 0 ? 0 : static_cast<int64_t>(in.values().size()) / in_rows;
  for (int64_t at = 0; at < in_rows; ++at) {
    int64_t key;
    std::memcpy(&key, in.keys().data() + at * sizeof(int64_t), sizeof(key));
    const int ps = KeyShard(key, num_ps);
    if (!selected[ps]) continue;
    proto::RowBlock& part = (*parts)[ps];
    if (part.keys().empty()) {
      part.set_table(in.table());
      part.set_erase(in.erase());
    }
    part.mutable_keys()->append(reinterpret_cast<const char*>(&key), sizeof(key));
    part.mutable_values()->append(in.values(), at * row_bytes, row_bytes);
    if (part.keys().size() / sizeof(int64_t) ==
            static_cast<size_t>(EmbeddingTable::kMaxKeysPerRowBlock) &&
        !send(ps)) {
      return false;
    }
  }
  return true;
}

}  // namespace

Status PsFleet::ImportTable(RowSource* source, const std::vector<int>& which) {
  std::vector<bool> selected(num_ps(), which.empty());
  for (int ps : which) selected[ps] = true;
  // The table is read once and each block split by KeyShard among the ps
  // tasks, whose streams run side by side: a restore reads the file once
  // and writes every ps at once, however many ps tasks there are.
  std::vector<RowFeed> feeds(num_ps());
  std::vector<Status> streamed(num_ps(), OkStatus());
  std::vector<std::thread> streams;
  for (int ps = 0; ps < num_ps(); ++ps) {
    if (!selected[ps]) continue;
    streams.emplace_back([this, ps, &feeds, &streamed] {
      streamed[ps] = clients_[ps]
                         ->ImportRows(placement_.fingerprint,
                                      [&](proto::RowBlock* out) { return feeds[ps].Take(out); })
                         .status();
      feeds[ps].End();
    });
  }
  Status read = OkStatus();
  std::vector<proto::RowBlock> parts(num_ps());
  auto send = [&](int ps) -> bool {
    if (parts[ps].keys().empty()) return true;
    proto::RowBlock block = std::move(parts[ps]);
    parts[ps].Clear();
    return feeds[ps].Put(std::move(block));
  };
  proto::RowBlock in;
  bool going = true;
  while (going) {
    auto more = source->Next(&in);
    if (!more.ok()) read = more.status();
    if (!more.ok() || !*more) break;
    going = SplitRows(in, selected, &parts, send);
    // A saved block's end ends the blocks built from it (the next may be
    // of the other kind, erase or not).
    for (int ps = 0; ps < num_ps() && going; ++ps) going = send(ps);
  }
  for (RowFeed& feed : feeds) feed.Close();
  for (std::thread& t : streams) t.join();
  PS_RETURN_IF_ERROR(read);
  for (const Status& s : streamed) PS_RETURN_IF_ERROR(s);
  return OkStatus();
}

Status PsFleet::FinishRestore() {
  return ForEachPs([&](int ps) { return clients_[ps]->FinishRestore(placement_.fingerprint); });
}

Status PsFleet::PullState(State* state, PsSteps* steps) {
  std::vector<std::map<std::string, Tensor>> pulled(num_ps());
  PsSteps got(num_ps(), 0);
  PS_RETURN_IF_ERROR(ForEachPs([&](int ps) {
    return clients_[ps]->PullState(placement_.fingerprint, &pulled[ps], &got[ps]);
  }));
  state->clear();
  std::map<std::string, const cluster::VariableInfo*> infos;
  for (const auto& v : variables_) infos[v.name] = &v;
  for (int ps = 0; ps < num_ps(); ++ps) {
    for (auto& [name, tensor] : pulled[ps]) {
      // Find the shard this tensor belongs to: its name, or its name + "/suffix".
      const cluster::Shard* owner = nullptr;
      for (const cluster::Shard* shard : shards_by_ps_[ps]) {
        if (name == shard->name ||
            name.compare(0, shard->name.size() + 1, shard->name + "/") == 0) {
          if (owner == nullptr || shard->name.size() > owner->name.size()) owner = shard;
        }
      }
      if (owner == nullptr || tensor.shape() != owner->shape) {
        return DataLoss(clients_[ps]->name() + " returned unexpected tensor " + name);
      }
      const std::string whole_name = owner->variable + name.substr(owner->name.size());
      const Shape& shape = infos.at(owner->variable)->shape;
      auto it = state->find(whole_name);
      if (it == state->end()) it = state->emplace(whole_name, Tensor(shape)).first;
      PlaceRows(tensor, *owner, &it->second);
    }
  }
  if (steps != nullptr) *steps = std::move(got);
  return OkStatus();
}

namespace {

// The keys of a table that `ps` holds, as a request carries them.
proto::TableKeys KeysOnPs(const PsFleet::TableStep& t, int ps) {
  std::vector<int64_t> keys;
  keys.reserve(t.places[ps].size());
  for (int32_t i : t.places[ps]) keys.push_back(t.ids.keys[i]);
  proto::TableKeys out;
  out.set_table(t.table);
  out.set_keys(EncodeKeys(keys));
  return out;
}

}  // namespace

Status PsFleet::Shard(std::vector<TableStep>* tables) const {
  std::vector<int64_t> keys_on_ps(num_ps(), 0);  // of the tables so far
  for (TableStep& t : *tables) {
    t.places.assign(num_ps(), {});
    for (size_t i = 0; i < t.ids.keys.size(); ++i) {
      t.places[KeyShard(t.ids.keys[i], num_ps())].push_back(static_cast<int32_t>(i));
    }
    for (int ps = 0; ps < num_ps(); ++ps) {
      const auto n = static_cast<int64_t>(t.places[ps].size());
      keys_on_ps[ps] += n;
      if (keys_on_ps[ps] <= EmbeddingTable::kMaxKeysPerRequest) continue;
      return InvalidArgument("a batch names " + std::to_string(n) + " distinct keys of table " +
                             t.table + " held by ps:" + std::to_string(ps) + " (" +
                             std::to_string(keys_on_ps[ps]) +
                             " with the tables before it), and a request carries at most " +
                             std::to_string(EmbeddingTable::kMaxKeysPerRequest) +
                             ": lower --batch_size (or add ps tasks)");
    }
  }
  return OkStatus();
}

Status PsFleet::PullVariables(std::vector<Tensor>* values, PsSteps* steps, int64_t min_step,
                              std::chrono::milliseconds wait) {
  std::vector<TableStep> none;
  return PullVariablesAndRows(values, &none, steps, min_step, wait);
}

Status PsFleet::PullVariablesAndRows(std::vector<Tensor>* values, std::vector<TableStep>* tables,
                                     PsSteps* steps, int64_t min_step,
                                     std::chrono::milliseconds wait) {
  std::vector<std::map<std::string, Tensor>> pulled;
  {
    MutexLock lock(&pull_buffers_mu_);
    pulled.swap(pull_buffers_);  // a concurrent pull finds none and allocates
  }
  pulled.resize(num_ps());
  values->resize(variables_.size());
  for (size_t v = 0; v < variables_.size(); ++v) {
    ShapeVariable(v, values);
    // A part of a variable is received straight into its rows.
    for (const cluster::Shard* shard : placement_.ShardsOfVariable(variables_[v].name)) {
      if (shard->num_parts > 1) pulled[shard->ps][shard->name] = RowsToFill(&(*values)[v], *shard);
    }
  }
  PsSteps got(num_ps(), 0);
  Status s = ForEachPs([&](int ps) {
    std::vector<proto::TableKeys> lookups;
    for (const TableStep& t : *tables) {
      if (!t.places[ps].empty()) lookups.push_back(KeysOnPs(t, ps));
    }
    return clients_[ps]->PullWithRows(placement_.fingerprint, {}, lookups, &pulled[ps], &got[ps],
                                      min_step, wait);
  });
  for (size_t v = 0; s.ok() && v < variables_.size(); ++v) {
    for (const cluster::Shard* shard : placement_.ShardsOfVariable(variables_[v].name)) {
      s = PlaceShard(*shard, &pulled[shard->ps], &(*values)[v]);
      if (!s.ok()) break;
    }
  }
  // Each ps's rows to their places; the pull buffers keep variables only.
  for (TableStep& t : *tables) {
    t.rows = Tensor({static_cast<int64_t>(t.ids.keys.size()), t.dim}, Tensor::kUninitialized);
    for (int ps = 0; ps < num_ps(); ++ps) {
      auto it = pulled[ps].find(t.table);
      if (it == pulled[ps].end()) continue;
      const Tensor& got_rows = it->second;
      const Shape want = {static_cast<int64_t>(t.places[ps].size()), t.dim};
      if (s.ok() && got_rows.shape() != want) {
        s = DataLoss(clients_[ps]->name() + ": rows of " + t.table + " came as " +
                     ShapeString(got_rows.shape()) + ", not " + ShapeString(want));
      }
      for (size_t k = 0; s.ok() && k < t.places[ps].size(); ++k) {
        CopyRow(t.rows.data() + int64_t{t.places[ps][k]} * t.dim, got_rows.data() + k * t.dim,
                t.dim);
      }
      pulled[ps].erase(it);
    }
  }
  ReturnPullBuffers(&pulled, !s.ok());
  PS_RETURN_IF_ERROR(s);
  if (steps != nullptr) *steps = std::move(got);
  return OkStatus();
}

std::vector<Tensor> PsFleet::VariableBuffers() {
  if (memory_ == nullptr) {
    std::vector<Tensor> buffers;
    for (const cluster::VariableInfo& v : variables_) {
      buffers.emplace_back(v.shape, Tensor::kUninitialized);
    }
    return buffers;
  }
  // The variables trade places with the pull buffers of whole shards
  // (PlaceShard): those of a ps the memory serves start out in it too.
  std::call_once(pull_buffers_placed_, [this] {
    MutexLock lock(&pull_buffers_mu_);
    pull_buffers_.resize(num_ps());
    for (int ps = 0; ps < num_ps(); ++ps) {
      if (!memory_->Serves(ps)) continue;
      for (const cluster::Shard* shard : shards_by_ps_[ps]) {
        if (shard->num_parts == 1) pull_buffers_[ps][shard->name] = memory_->Allocate(shard->shape);
      }
    }
  });
  std::vector<Tensor> buffers;
  for (const cluster::VariableInfo& v : variables_) buffers.push_back(memory_->Allocate(v.shape));
  return buffers;
}

void PsFleet::Retire(std::vector<Tensor> tensors) {
  if (memory_ != nullptr) memory_->Retire(std::move(tensors));
}

void PsFleet::ReturnPullBuffers(std::vector<std::map<std::string, Tensor>>* buffers, bool failed) {
  // The views into the caller's variables go; the buffers of whole ones
  // stay for the next pull, unless the pull failed.
  std::vector<Tensor> used;
  for (auto& by_name : *buffers) {
    DropViews(&by_name);
    if (!failed) continue;
    for (auto& [name, t] : by_name) used.push_back(std::move(t));
    by_name.clear();
  }
  if (failed) Retire(std::move(used));
  MutexLock lock(&pull_buffers_mu_);
  pull_buffers_.swap(*buffers);
}

void PsFleet::ShapeVariable(size_t v, std::vector<Tensor>* values) const {
  Tensor& whole = (*values)[v];
  if (whole.shape() != variables_[v].shape) {
    whole = Tensor(variables_[v].shape, Tensor::kUninitialized);
  }
}

Status PsFleet::PlaceShard(const cluster::Shard& shard, std::map<std::string, Tensor>* buffers,
                           Tensor* whole) const {
  auto it = buffers->find(shard.name);
  if (it == buffers->end()) {
    return DataLoss(clients_[shard.ps]->name() + " did not return " + shard.name);
  }
  if (it->second.shape() != shard.shape) {
    return DataLoss(clients_[shard.ps]->name() + " returned " + shard.name + " with shape " +
                    ShapeString(it->second.shape()));
  }
  if (shard.num_parts == 1) {
    // The whole variable: no copy; the caller's old buffer is the next pull's.
    std::swap(*whole, it->second);
  } else {
    PlaceRows(it->second, shard, whole);  // nothing to do if it was received in place
  }
  return OkStatus();
}

proto::PushHeader PsFleet::PushHeaderFor(int ps, int worker, int64_t local_step,
                                         const PsSteps& pulled, bool sync,
                                         uint64_t sequence) const {
  proto::PushHeader header;
  header.set_placement_fingerprint(placement_.fingerprint);
  header.set_worker(worker);
  header.set_incarnation(incarnation_);
  header.set_sequence(sequence);
  header.set_local_step(local_step);
  header.set_computed_at_step(sync ? pulled[ps] : pulled[0]);
  header.set_increment_global_step(!sync && ps == 0);
  header.set_num_tensors(static_cast<int32_t>(shards_by_ps_[ps].size()));
  return header;
}

std::unique_ptr<StreamedPull> PsFleet::StartPull(std::vector<Tensor>* values, int64_t min_step,
                                                 std::chrono::milliseconds wait) {
  return std::make_unique<StreamedPull>(this, values, min_step, wait);
}

uint64_t PsFleet::SequenceFor(uint64_t sequence) {
  if (sequence == 0) return ++last_sequence_;
  last_sequence_ = std::max(last_sequence_, sequence);
  return sequence;
}

std::unique_ptr<StreamedPush> PsFleet::StartPush(int worker, int64_t local_step,
                                                 const PsSteps& pulled, bool sync,
                                                 uint64_t sequence) {
  return std::make_unique<StreamedPush>(this, worker, local_step, pulled, sync,
                                        SequenceFor(sequence));
}

StatusOr<PsFleet::PushResult> PsFleet::PushGradients(const std::vector<Tensor>& grads, int worker,
                                                     int64_t local_step, const PsSteps& pulled,
                                                     bool sync) {
  return PushGradientsAndRows(grads, {}, {}, worker, local_step, pulled, sync);
}

Status PsFleet::CheckPush(const std::vector<Tensor>& grads, const std::vector<TableStep>& tables,
                          const std::vector<Tensor>& row_grads) const {
  if (grads.size() != variables_.size()) {
    return InvalidArgument("a push of " + std::to_string(grads.size()) + " gradients for " +
                           std::to_string(variables_.size()) + " variables");
  }
  for (size_t v = 0; v < grads.size(); ++v) {
    if (grads[v].shape() != variables_[v].shape) {
      return InvalidArgument("the gradient of " + variables_[v].name + " has shape " +
                             ShapeString(grads[v].shape()) + ", the variable " +
                             ShapeString(variables_[v].shape));
    }
  }
  if (row_grads.size() != tables.size()) {
    return InvalidArgument("row gradients for " + std::to_string(row_grads.size()) + " of " +
                           std::to_string(tables.size()) + " tables");
  }
  for (size_t t = 0; t < tables.size(); ++t) {
    const TableStep& table = tables[t];
    const auto config = std::find_if(tables_.begin(), tables_.end(),
                                     [&](const auto& c) { return c.name() == table.table; });
    if (config == tables_.end()) return InvalidArgument("no embedding table " + table.table);
    if (config->dim() != table.dim) {
      return InvalidArgument("rows of " + table.table + " of dim " + std::to_string(table.dim) +
                             ", the table's is " + std::to_string(config->dim()));
    }
    const Shape rows{static_cast<int64_t>(table.ids.keys.size()), table.dim};
    if (row_grads[t].shape() != rows) {
      return InvalidArgument("row gradients of " + table.table + " have shape " +
                             ShapeString(row_grads[t].shape()) + ", its ids and dim " +
                             ShapeString(rows));
    }
    size_t placed = 0;
    for (const std::vector<int32_t>& places : table.places) placed += places.size();
    if (table.places.size() != clients_.size() || placed != table.ids.keys.size()) {
      return InvalidArgument("the ids of " + table.table + " were not split over the ps tasks");
    }
  }
  return OkStatus();
}

Tensor PsFleet::RowsOnPs(const TableStep& table, const Tensor& all, int ps) {
  const std::vector<int32_t>& places = table.places[ps];
  Tensor rows({static_cast<int64_t>(places.size()), table.dim}, Tensor::kUninitialized);
  for (size_t k = 0; k < places.size(); ++k) {
    CopyRow(rows.data() + k * table.dim, all.data() + int64_t{places[k]} * table.dim, table.dim);
  }
  return rows;
}

std::map<std::string, Tensor> PsFleet::ValuesOnPs(int ps,
                                                  const std::map<std::string, size_t>& index,
                                                  std::vector<Tensor>* values) const {
  std::map<std::string, Tensor> views;
  if (values == nullptr) return views;
  for (const cluster::Shard* shard : shards_by_ps_[ps]) {
    Tensor& value = (*values)[index.at(shard->variable)];
    views[shard->name] = shard->num_parts == 1 ? Tensor::View(value.shape(), value.data())
                                               : RowsToFill(&value, *shard);
  }
  return views;
}

StatusOr<PsFleet::PushResult> PsFleet::PushGradientsAndRows(
    const std::vector<Tensor>& grads, const std::vector<TableStep>& tables,
    const std::vector<Tensor>& row_grads, int worker, int64_t local_step, const PsSteps& pulled,
    bool sync, uint64_t sequence, std::vector<Tensor>* pull_into) {
  PS_RETURN_IF_ERROR(CheckPush(grads, tables, row_grads));
  sequence = SequenceFor(sequence);
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < variables_.size(); ++i) index[variables_[i].name] = i;
  if (pull_into != nullptr) {
    pull_into->resize(variables_.size());
    for (size_t v = 0; v < variables_.size(); ++v) ShapeVariable(v, pull_into);
  }
  PushResult result;
  result.sequence = sequence;
  result.steps.resize(num_ps());
  result.outcomes.resize(num_ps());
  std::vector<char> written(num_ps(), 0);  // char: set by each ps's thread
  PS_RETURN_IF_ERROR(ForEachPs([&](int ps) -> Status {
    proto::PushHeader header = PushHeaderFor(ps, worker, local_step, pulled, sync, sequence);
    std::vector<Tensor> slices;
    slices.reserve(shards_by_ps_[ps].size() + tables.size());
    NamedTensors named;
    for (const cluster::Shard* shard : shards_by_ps_[ps]) {
      const Tensor* whole = &grads[index.at(shard->variable)];
      if (shard->num_parts == 1) {
        named.emplace_back(shard->name, whole);
      } else {
        slices.push_back(SliceRows(*whole, *shard));
        named.emplace_back(shard->name, &slices.back());
      }
    }
    // Each table's rows this ps holds, gathered from their places.
    for (size_t t = 0; t < tables.size(); ++t) {
      if (tables[t].places[ps].empty()) continue;
      *header.add_sparse() = KeysOnPs(tables[t], ps);
      header.set_num_tensors(header.num_tensors() + 1);
      slices.push_back(RowsOnPs(tables[t], row_grads[t], ps));
      named.emplace_back(tables[t].table, &slices.back());
    }
    const std::map<std::string, Tensor> into = ValuesOnPs(ps, index, pull_into);
    auto response = pull_into != nullptr ? clients_[ps]->PushAndPull(header, named, into)
                                         : clients_[ps]->Push(header, named);
    if (!response.ok()) return response.status();
    result.steps[ps] = response->global_step();
    result.outcomes[ps] = response->outcome();
    written[ps] = into.empty() || response->values_in_arena();
    return OkStatus();
  }));
  result.values_pulled = pull_into != nullptr &&
                         std::all_of(written.begin(), written.end(), [](char w) { return w != 0; });
  return result;
}

StatusOr<proto::StatusResponse> PsFleet::CoordinatorStatus() {
  return clients_[0]->GetStatus(std::chrono::seconds(5));
}

Status PsFleet::SetLiveWorkers(const std::vector<int>& workers) {
  return ForEachPs([&](int ps) { return clients_[ps]->SetLiveWorkers(workers); });
}

Status PsFleet::ShutdownAll(const std::string& reason) {
  return ForEachPs([&](int ps) { return clients_[ps]->Shutdown(reason); });
}

}  // namespace pstrain
