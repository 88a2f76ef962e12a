#include "ps/embedding/embedding_table.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "cluster/key_partition.h"
#include "core/copy_row.h"
#include "core/flush_denormals.h"
#include "core/halves.h"
#include "core/prefetch.h"

namespace pstrain {
namespace {

// The bytes of a block of rows of `row_bytes`: a whole number of huge
// pages (so that no part of a block falls back to small pages), and room
// for kRowsPerBlock rows at least.
uint64_t BlockBytes(uint64_t row_bytes) {
  constexpr uint64_t kHugePage = uint64_t{2} << 20;
  const uint64_t least = std::max<uint64_t>(EmbeddingTable::kRowsPerBlock * row_bytes, kHugePage);
  return (least + kHugePage - 1) / kHugePage * kHugePage;
}

// The step kept beside each row in 31 bits (the 32nd is the changed bit),
// saturating below the free rows' mark.
uint32_t StepStamp(int64_t step) {
  constexpr uint32_t kLast = (1u << 31) - 2;
  if (step <= 0) return 0;
  return step >= kLast ? kLast : static_cast<uint32_t>(step);
}

}  // namespace

StatusOr<std::unique_ptr<EmbeddingTable>> EmbeddingTable::Create(
    const proto::EmbeddingTableConfig& config, const proto::OptimizerConfig& optimizer,
    std::string ps, MemoryBudget* budget) {
  const std::string where = "embedding table " + config.name();
  if (config.name().empty()) return InvalidArgument("embedding table with an empty name");
  if (config.dim() < 1 || config.dim() > kMaxDim) {
    return InvalidArgument(where + ": dim " + std::to_string(config.dim()) + " is not in [1, " +
                           std::to_string(kMaxDim) + "]");
  }
  if (config.vocabulary_size() < 0) return InvalidArgument(where + ": vocabulary_size < 0");
  if (config.min_count() < 0) return InvalidArgument(where + ": min_count < 0");
  if (config.ttl_steps() < 0) return InvalidArgument(where + ": ttl_steps < 0");
  if (config.num_shards() < 1 || config.shard() < 0 || config.shard() >= config.num_shards()) {
    return InvalidArgument(where + ": shard " + std::to_string(config.shard()) + " of " +
                           std::to_string(config.num_shards()));
  }
  if (config.has_initializer_stddev() &&
      !(config.initializer_stddev() >= 0 && config.initializer_stddev() < 1e6f)) {
    return InvalidArgument(where + ": initializer_stddev must be in [0, 1e6)");
  }
  if (config.has_initializer_uniform() &&
      !(config.initializer_uniform() >= 0 && config.initializer_uniform() < 1e6f)) {
    return InvalidArgument(where + ": initializer_uniform must be in [0, 1e6)");
  }
  if (config.has_initializer_stddev() && config.has_initializer_uniform()) {
    return InvalidArgument(where + ": set initializer_stddev or initializer_uniform, not both");
  }
  auto made = Optimizer::Create(config.optimizer().name().empty() ? optimizer : config.optimizer());
  if (!made.ok()) return made.status().Annotate(where);
  return std::unique_ptr<EmbeddingTable>(
      new EmbeddingTable(config, std::move(made).value(), std::move(ps), budget));
}

EmbeddingTable::EmbeddingTable(const proto::EmbeddingTableConfig& config,
                               std::unique_ptr<Optimizer> optimizer, std::string ps,
                               MemoryBudget* budget)
    : config_(config),
      optimizer_(std::move(optimizer)),
      slot_names_(optimizer_->slot_names()),
      ps_(std::move(ps)),
      budget_(budget),
      initializer_(RowInitializer::Of(config)),
      stride_(int64_t{config.dim()} * static_cast<int64_t>(1 + slot_names_.size())),
      header_floats_(HeaderFloats(stride_)),
      row_floats_(RowFloats(stride_)),
      block_bytes_(BlockBytes(static_cast<uint64_t>(row_floats_) * sizeof(float))),
      rows_per_block_(static_cast<int64_t>(block_bytes_ / (row_floats_ * sizeof(float)))) {}

EmbeddingTable::~EmbeddingTable() {
  WriterLock lock(&mu_);
  budget_->Release(reserved_);
}

Status EmbeddingTable::CheckKeys(const std::vector<int64_t>& keys) const {
  if (static_cast<int64_t>(keys.size()) > kMaxKeysPerRequest) {
    return InvalidArgument("embedding table " + name() + ": " + std::to_string(keys.size()) +
                           " keys in one request, more than " + std::to_string(kMaxKeysPerRequest));
  }
  const int64_t vocabulary = config_.vocabulary_size();
  for (int64_t key : keys) {
    if (vocabulary > 0 && (key < 0 || key >= vocabulary)) {
      return InvalidArgument("embedding table " + name() + ": key " + std::to_string(key) +
                             " is outside its vocabulary [0, " + std::to_string(vocabulary) + ")");
    }
    const int shard = KeyShard(key, config_.num_shards());
    if (shard != config_.shard()) {
      return InvalidArgument("embedding table " + name() + ": key " + std::to_string(key) +
                             " belongs to shard " + std::to_string(shard) + ", not to " + ps_ +
                             "'s shard " + std::to_string(config_.shard()) +
                             " (do all tasks use the same cluster spec?)");
    }
  }
  return OkStatus();
}

float* EmbeddingTable::RowStart(uint32_t row) const {
  const Place at = PlaceOf(row);
  return blocks_[at.block].rows.get() + int64_t{at.index} * row_floats_;
}

float* EmbeddingTable::RowData(uint32_t row) const { return RowStart(row) + header_floats_; }

int64_t& EmbeddingTable::KeyOf(uint32_t row) const {
  return *reinterpret_cast<int64_t*>(RowStart(row));
}

uint32_t& EmbeddingTable::StepOf(uint32_t row) const {
  const Place at = PlaceOf(row);
  return blocks_[at.block].steps[at.index];
}

void EmbeddingTable::PrefetchAhead(const int64_t* keys, size_t i, size_t n, int64_t floats) const {
  constexpr size_t kEntriesAhead = 48, kRowsAhead = 24;
  if (i + kEntriesAhead < n) index_.PrefetchHome(keys[i + kEntriesAhead]);
  if (i + kRowsAhead < n) {
    const uint32_t row = index_.GuessRow(keys[i + kRowsAhead]);
    if (row != RowIndex::kAbsent) {
      // The row's key (which a Find compares) and its first values.
      const float* start = RowStart(row);
      for (int64_t f = 0; f < header_floats_ + floats; f += 16) Prefetch(start + f);
    }
  }
}

uint32_t EmbeddingTable::FindLocked(int64_t key) const {
  return index_.Find(key, [this](uint32_t row) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    return KeyOf(row);  // under mu_, held by the caller
  });
}

void EmbeddingTable::Lookup(const std::vector<int64_t>& keys, float* out) const {
  ReaderLock lock(&mu_);
  const int64_t dim = config_.dim();
  // Random reads bound by memory latency: a batch of 64K floats or more
  // reads in two halves on two threads, both under this thread's lock.
  RunInHalves(static_cast<int64_t>(keys.size()), std::max<int64_t>(1, (int64_t{1} << 16) / dim),
              [&](int64_t begin, int64_t end) ABSL_NO_THREAD_SAFETY_ANALYSIS {
                for (int64_t i = begin; i < end; ++i) {
                  PrefetchAhead(keys.data(), i, end, dim);
                  const uint32_t row = FindLocked(keys[i]);
                  if (row == RowIndex::kAbsent) {
                    initializer_.Fill(keys[i], out + i * dim);
                  } else {
                    CopyRow(out + i * dim, RowData(row), dim);
                  }
                }
              });
}

uint64_t EmbeddingTable::HeldBytesLocked() const {
  return index_.bytes() + sightings_.bytes() + blocks_.size() * BlockHeldBytes() +
         dropped_.capacity() * sizeof(int64_t);
}

uint64_t EmbeddingTable::GrowthBytesLocked(const Growth& growth) const {
  // Rows are numbered in 32 bits: more than that never fit.
  if (index_.size() + growth.new_rows >= int64_t{RowIndex::kAbsent}) return UINT64_MAX;
  // Rows beyond the free list and the blocks' unused rows need new blocks.
  int64_t free_rows = 0;
  for (uint32_t r = free_head_; r != RowIndex::kAbsent && free_rows < growth.new_rows;
       ++free_rows) {
    std::memcpy(&r, RowData(r), sizeof(r));
  }
  const int64_t from_blocks = std::max<int64_t>(0, growth.new_rows - free_rows);
  const int64_t spare = static_cast<int64_t>(blocks_.size()) * rows_per_block_ - used_rows_;
  const int64_t new_blocks =
      (std::max<int64_t>(0, from_blocks - spare) + rows_per_block_ - 1) / rows_per_block_;
  const uint64_t after = index_.BytesToInsert(growth.new_rows) +
                         sightings_.BytesToInsert(growth.new_sightings) +
                         (blocks_.size() + new_blocks) * BlockHeldBytes();
  const uint64_t held = HeldBytesLocked();
  return after > held ? after - held : 0;
}

EmbeddingTable::Plan EmbeddingTable::PlanApply(const SparseRows& gradient) const {
  ReaderLock lock(&mu_);
  return PlanLocked(gradient);
}

EmbeddingTable::Plan EmbeddingTable::PlanLocked(const SparseRows& gradient) const {
  Plan plan;
  plan.version = version_;
  Growth growth;
  const int min_count = std::max(1, config_.min_count());
  plan.rows.resize(gradient.keys.size());
  for (size_t i = 0; i < gradient.keys.size(); ++i) {
    PrefetchAhead(gradient.keys.data(), i, gradient.keys.size(), 0);
    const int64_t key = gradient.keys[i];
    plan.rows[i] = FindLocked(key);
    if (plan.rows[i] != RowIndex::kAbsent) continue;
    if (min_count == 1) {
      ++growth.new_rows;
      continue;
    }
    const uint32_t seen = sightings_.Find(key);
    if ((seen == KeyIndex::kAbsent ? 0 : seen) + 1 >= static_cast<uint32_t>(min_count)) {
      ++growth.new_rows;
    } else if (seen == KeyIndex::kAbsent) {
      ++growth.new_sightings;
    }
  }
  plan.new_rows = growth.new_rows;
  plan.bytes = GrowthBytesLocked(growth);
  return plan;
}

Status EmbeddingTable::OverBudget(const Plan& plan) const {
  return ResourceExhausted("embedding table " + name() + " on " + ps_ + ": " +
                           std::to_string(plan.new_rows) + " new rows need " +
                           std::to_string(plan.bytes) + " more bytes, past --max_memory_bytes (" +
                           std::to_string(budget_->used()) + " of " +
                           std::to_string(budget_->max_bytes()) + " bytes held); nothing applied");
}

Status EmbeddingTable::Apply(const SparseRows& gradient, int64_t global_step) {
  WriterLock lock(&mu_);
  const Plan plan = PlanLocked(gradient);
  if (plan.bytes > 0 && !budget_->TryReserve(plan.bytes)) return OverBudget(plan);
  ApplyPlannedLocked(gradient, plan, global_step);
  return OkStatus();
}

Status EmbeddingTable::ApplyPlanned(const SparseRows& gradient, const Plan& plan,
                                    int64_t global_step) {
  WriterLock lock(&mu_);
  if (plan.version != version_) {
    budget_->Release(plan.bytes);
    return Aborted("embedding table " + name() + " on " + ps_ +
                   " changed since the update was planned; nothing applied");
  }
  ApplyPlannedLocked(gradient, plan, global_step);
  return OkStatus();
}

uint32_t EmbeddingTable::NewRowLocked(int64_t key) {
  uint32_t row;
  if (free_head_ != RowIndex::kAbsent) {
    row = free_head_;
    std::memcpy(&free_head_, RowData(row), sizeof(free_head_));
  } else {
    if (used_rows_ == static_cast<int64_t>(blocks_.size()) * rows_per_block_) {
      Block block;
      block.rows = MakeRandomReadArray<float>(block_bytes_ / sizeof(float));
      block.steps.reset(new uint32_t[rows_per_block_]);
      blocks_.push_back(std::move(block));
    }
    row = static_cast<uint32_t>(used_rows_++);
  }
  KeyOf(row) = key;
  index_.Insert(key, row);
  return row;
}

void EmbeddingTable::FreeRowLocked(int64_t key, uint32_t row) {
  index_.Erase(key, [this](uint32_t r) ABSL_NO_THREAD_SAFETY_ANALYSIS { return KeyOf(r); });
  StepOf(row) = kFreeRow;
  std::memcpy(RowData(row), &free_head_, sizeof(free_head_));
  free_head_ = row;
}

void EmbeddingTable::AdmitRowsLocked(const std::vector<int64_t>& keys, uint32_t stamp,
                                     std::vector<uint32_t>* rows) {
  const int64_t n = static_cast<int64_t>(keys.size());
  const int64_t dim = config_.dim();
  const int min_count = std::max(1, config_.min_count());
  for (int64_t i = 0; i < n; ++i) {
    if (i + 16 < n && (*rows)[i + 16] != RowIndex::kAbsent) Prefetch(&StepOf((*rows)[i + 16]));
    const int64_t key = keys[i];
    uint32_t& row = (*rows)[i];
    if (row == RowIndex::kAbsent) {
      if (min_count > 1) {
        uint32_t* seen = sightings_.FindMutable(key);
        const uint32_t sightings = (seen == nullptr ? 0 : *seen) + 1;
        if (sightings < static_cast<uint32_t>(min_count)) {
          if (seen == nullptr) {
            sightings_.Insert(key, sightings);
          } else {
            *seen = sightings;
          }
          ++dropped_gradients_;
          continue;  // row stays kAbsent: nothing applied
        }
        if (seen != nullptr) sightings_.Erase(key);
      }
      row = NewRowLocked(key);
      float* data = RowData(row);
      initializer_.Fill(key, data);
      for (size_t s = 0; s < slot_names_.size(); ++s) {
        std::fill(data + (s + 1) * dim, data + (s + 2) * dim,
                  optimizer_->slot_initial_value(static_cast<int>(s)));
      }
      ++admitted_;
    }
    StepOf(row) = stamp | kChanged;
  }
}

void EmbeddingTable::ApplyPlannedLocked(const SparseRows& gradient, const Plan& plan,
                                        int64_t global_step) {
  ++version_;
  reserved_ += plan.bytes;
  const int64_t n = static_cast<int64_t>(gradient.keys.size());
  const int64_t dim = config_.dim();
  const float lr = optimizer_->lr_schedule().At(global_step);
  const int64_t count = ++update_count_;
  // First the rows: admission, the rows new keys get, the stamps.
  std::vector<uint32_t> rows(plan.rows);
  AdmitRowsLocked(gradient.keys, StepStamp(global_step), &rows);
  // Then the update rule on each row (the keys are unique, so each row
  // once), in two halves on two threads for a big push, under this
  // thread's lock.
  auto apply = [&](int64_t begin, int64_t end, const float* grads, int64_t grad_stride,
                   const std::vector<uint32_t>& which) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    ScopedFlushDenormals flush;  // as TensorFlow's update ops run, on either thread
    std::vector<float*> slots(slot_names_.size());
    for (int64_t i = begin; i < end; ++i) {
      // The rows a few keys ahead: their values and slots.
      if (i + 4 < end && which[i + 4] != RowIndex::kAbsent) {
        const float* ahead = RowStart(which[i + 4]);
        for (int64_t b = 0; b < row_floats_; b += 16) Prefetch(ahead + b);
      }
      if (which[i] == RowIndex::kAbsent) continue;
      float* data = RowData(which[i]);
      for (size_t s = 0; s < slots.size(); ++s) slots[s] = data + (s + 1) * dim;
      optimizer_->Apply(data, slots, grads + i * grad_stride, dim, lr, count);
    }
  };
  const int64_t min_split = std::max<int64_t>(1, (int64_t{1} << 16) / stride_);
  RunInHalves(n, min_split, [&](int64_t begin, int64_t end) {
    apply(begin, end, gradient.rows.data(), dim, rows);
  });
  if (optimizer_->sparse_updates_every_row()) {
    // TF's sparse Adam: every other row as with a zero gradient.
    std::vector<uint32_t> touched(rows);
    std::sort(touched.begin(), touched.end());
    std::vector<uint32_t> others;
    for (int64_t r = 0; r < used_rows_; ++r) {
      const auto row = static_cast<uint32_t>(r);
      if (StepOf(row) != kFreeRow && !std::binary_search(touched.begin(), touched.end(), row)) {
        others.push_back(row);
      }
    }
    const std::vector<float> zero(dim, 0.0f);
    RunInHalves(static_cast<int64_t>(others.size()), min_split,
                [&](int64_t begin, int64_t end) { apply(begin, end, zero.data(), 0, others); });
  }
  // The index's and the sightings' arrays settle at their new sizes: what
  // growth reserved for the moves is given back.
  SettleLocked();
}

int64_t EmbeddingTable::Expire(int64_t global_step) {
  if (config_.ttl_steps() <= 0) return 0;
  WriterLock lock(&mu_);
  ++version_;
  const int64_t ttl = config_.ttl_steps();
  int64_t dropped = 0;
  for (int64_t r = 0; r < used_rows_; ++r) {
    const auto row = static_cast<uint32_t>(r);
    const uint32_t step = StepOf(row);
    if (step != kFreeRow && global_step - static_cast<int64_t>(step & ~kChanged) > ttl) {
      dropped_.push_back(KeyOf(row));
      FreeRowLocked(KeyOf(row), row);
      ++dropped;
    }
  }
  expired_ += dropped;
  SettleLocked();
  return dropped;
}

void EmbeddingTable::SettleLocked() {
  const uint64_t held = HeldBytesLocked();
  if (held > reserved_) {
    budget_->Take(held - reserved_);
  } else {
    budget_->Release(reserved_ - held);
  }
  reserved_ = held;
}

int64_t EmbeddingTable::row_end() const {
  ReaderLock lock(&mu_);
  return used_rows_;
}

int64_t EmbeddingTable::ReadRows(int64_t first, int64_t count, bool changed_only,
                                 RowBlock* out) const {
  ReaderLock lock(&mu_);
  const bool every_row_changes = optimizer_->sparse_updates_every_row();
  const int64_t end = std::min(used_rows_, first + count);
  for (int64_t r = std::max<int64_t>(first, 0); r < end; ++r) {
    const auto row = static_cast<uint32_t>(r);
    const uint32_t step = StepOf(row);
    if (step == kFreeRow) continue;
    if (changed_only && !every_row_changes && (step & kChanged) == 0) continue;
    out->keys.push_back(KeyOf(row));
    const float* data = RowData(row);
    out->values.insert(out->values.end(), data, data + stride_);
  }
  return end >= used_rows_ ? used_rows_ : end;
}

Status EmbeddingTable::WriteRows(const RowBlock& rows, int64_t global_step) {
  const int64_t n = static_cast<int64_t>(rows.keys.size());
  if (static_cast<int64_t>(rows.values.size()) != n * stride_) {
    return InvalidArgument("embedding table " + name() + ": " + std::to_string(n) + " keys but " +
                           std::to_string(rows.values.size()) + " values (" +
                           std::to_string(stride_) + " a row with its slots)");
  }
  WriterLock lock(&mu_);
  std::vector<uint32_t> found(rows.keys.size());
  Growth growth;
  for (int64_t i = 0; i < n; ++i) {
    found[i] = FindLocked(rows.keys[i]);
    growth.new_rows += found[i] == RowIndex::kAbsent ? 1 : 0;
  }
  const uint64_t bytes = GrowthBytesLocked(growth);
  if (bytes > 0 && !budget_->TryReserve(bytes)) {
    return ResourceExhausted("embedding table " + name() + " on " + ps_ + ": restoring " +
                             std::to_string(growth.new_rows) + " rows needs " +
                             std::to_string(bytes) + " more bytes, past --max_memory_bytes (" +
                             std::to_string(budget_->used()) + " of " +
                             std::to_string(budget_->max_bytes()) + " bytes held)");
  }
  reserved_ += bytes;
  ++version_;
  const uint32_t stamp = StepStamp(global_step);
  for (int64_t i = 0; i < n; ++i) {
    // A key the block holds twice has its row from the first time.
    uint32_t row = found[i] != RowIndex::kAbsent ? found[i] : FindLocked(rows.keys[i]);
    if (row == RowIndex::kAbsent) row = NewRowLocked(rows.keys[i]);
    std::memcpy(RowData(row), rows.values.data() + i * stride_, stride_ * sizeof(float));
    StepOf(row) = stamp | kChanged;
  }
  SettleLocked();
  return OkStatus();
}

int64_t EmbeddingTable::EraseRows(const std::vector<int64_t>& keys) {
  WriterLock lock(&mu_);
  ++version_;
  int64_t erased = 0;
  for (int64_t key : keys) {
    const uint32_t row = FindLocked(key);
    if (row == RowIndex::kAbsent) continue;
    FreeRowLocked(key, row);
    ++erased;
  }
  return erased;
}

void EmbeddingTable::SetUpdateCount(int64_t count) {
  WriterLock lock(&mu_);
  update_count_ = count;
}

std::vector<int64_t> EmbeddingTable::DroppedKeys() const {
  ReaderLock lock(&mu_);
  return dropped_;
}

void EmbeddingTable::StartDeltas() {
  WriterLock lock(&mu_);
  for (int64_t r = 0; r < used_rows_; ++r) {
    uint32_t& step = StepOf(static_cast<uint32_t>(r));
    if (step != kFreeRow) step &= ~kChanged;
  }
  std::vector<int64_t>().swap(dropped_);
  SettleLocked();
}

EmbeddingTable::Stats EmbeddingTable::stats() const {
  ReaderLock lock(&mu_);
  Stats s;
  s.rows = index_.size();
  s.bytes = static_cast<int64_t>(reserved_);
  s.admitted = admitted_;
  s.expired = expired_;
  s.pending_keys = sightings_.size();
  s.dropped_gradients = dropped_gradients_;
  return s;
}

}  // namespace pstrain
