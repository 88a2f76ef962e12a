// EmbeddingTable: one ps task's shard of an embedding table. Rows of `dim`
// floats, each with its optimizer slots beside it and its key, found by
// int64 key in a RowIndex (open addressing, no collisions), made when a
// key's first gradient arrives: a lookup of a key without a row answers its
// initial value (RowInitializer), which no one needs to store. Rows never
// move, so the table can be read out block by block while it trains
// (ReadRows: a checkpoint) and written back (WriteRows: a restore).
//
// Updates follow TF's SparseApply* kernels: the touched rows only, each by
// the optimizer's per-element rule (ps/optimizer.h), at the learning rate
// of the table's schedule at the global step. The exception is TF's own
// sparse Adam ("Adam"), which decays m and v of every row and moves every
// row (Optimizer::sparse_updates_every_row); "LazyAdam" touches only the
// rows with a gradient. Adam's t is the number of pushes this shard has
// applied, counted from the global step it was initialized or restored at.
//
// Admission (min_count > 1): a key's sightings are counted, one per push
// that carries it; the push that brings them to min_count makes its row and
// applies its gradient; earlier ones are dropped. Expiry (ttl_steps > 0):
// Expire drops the rows whose last gradient came more than ttl_steps global
// steps ago (the step each row last had a gradient at is kept in 32 bits,
// saturating); an expired key starts again as a new one.
//
// Memory: every byte the table allocates is first reserved in the ps's
// MemoryBudget; a push whose new rows do not fit is refused whole
// (ResourceExhausted naming the table and the ps), nothing changed. A row
// costs its values and slots, its key (8 bytes, 4 more where its floats
// are odd in number, or 64 bytes for rows of whole cache lines of 256
// bytes or more, which then start on a line), the step of its last
// gradient (4) and at most 17.2 bytes of index (RowIndex): MaxBytesBeside.
// Rows are allocated in blocks of 2 MiB at least (huge pages,
// core/huge_pages.h), and the rows of expired keys are reused.
//
// Thread-safe: any call from any thread. Lookups share the table's lock;
// updates, writes, erasures and expiry take it alone. Apply plans, reserves
// and applies under one hold of it. A plan (PlanApply) is applied only to
// the state it was made on: each change to the rows moves the table's
// version, and ApplyPlanned refuses (Aborted, nothing changed) a plan that
// another change overtook. An owner that applies several tables together
// (ps/embedding/embedding_tables.h) serializes its plans and their
// applications, so its plans are never overtaken.
#ifndef PSTRAIN_PS_EMBEDDING_EMBEDDING_TABLE_H_
#define PSTRAIN_PS_EMBEDDING_EMBEDDING_TABLE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/huge_pages.h"
#include "core/mutex.h"
#include "core/status.h"
#include "proto/ps.pb.h"
#include "ps/embedding/key_index.h"
#include "ps/embedding/row_index.h"
#include "ps/embedding/row_initializer.h"
#include "ps/embedding/sparse_rows.h"
#include "ps/memory_budget.h"
#include "ps/optimizer.h"

namespace pstrain {

class EmbeddingTable {
 public:
  // Rows are allocated in blocks of at least this many (more for short
  // rows: a block is a whole number of 2 MiB huge pages).
  static constexpr int64_t kRowsPerBlock = 1024;
  // The most keys one request may carry, of all its tables together (8 MiB
  // of them: a request's header travels in one frame of at most 16 MiB on
  // the tensor channel). A step sends each ps its keys in one pull and one
  // push, so this bounds the distinct ids of a batch that one ps holds.
  static constexpr int64_t kMaxKeysPerRequest = int64_t{1} << 20;
  // The most keys of one block of rows a checkpoint exports or restores.
  static constexpr int64_t kMaxKeysPerRowBlock = int64_t{1} << 16;
  // The widest row.
  static constexpr int kMaxDim = 1 << 16;

  // InvalidArgument, naming the table, for a bad config (empty name, dim
  // out of [1, kMaxDim], a negative count, a shard outside [0, num_shards))
  // or optimizer. `ps` names this ps in errors ("ps:1"). Borrows budget,
  // which must outlive the table.
  static StatusOr<std::unique_ptr<EmbeddingTable>> Create(const proto::EmbeddingTableConfig& config,
                                                          const proto::OptimizerConfig& optimizer,
                                                          std::string ps, MemoryBudget* budget);
  ~EmbeddingTable();

  const std::string& name() const { return config_.name(); }
  int dim() const { return config_.dim(); }
  const proto::EmbeddingTableConfig& config() const { return config_; }
  // The most bytes a row holds beside its values and slots (`stride`
  // floats of them): its key, its step, its index entries.
  static double MaxBytesBeside(int64_t stride) {
    return 4.0 * (RowFloats(stride) - stride) + sizeof(uint32_t) + 17.2;
  }
  const std::vector<std::string>& slot_names() const { return slot_names_; }
  // Adam's t before the next push: after a restore from a checkpoint at
  // step S the table is taken to have had S updates, as a variable is.
  void SetUpdateCount(int64_t count);

  // OK when every key may be asked of this shard: within the vocabulary
  // and this shard's by KeyShard. InvalidArgument naming the first that is
  // not.
  Status CheckKeys(const std::vector<int64_t>& keys) const;

  // The rows of `keys` (checked), their initial values for keys without
  // one, into out[i * dim].
  void Lookup(const std::vector<int64_t>& keys, float* out) const;

  // Applies a gradient (checked keys, unique) at the learning rate of the
  // table's schedule at `global_step`, stamping the touched rows with it.
  // ResourceExhausted, naming the table and the ps, when the rows it would
  // make do not fit the budget: nothing applied, no sighting counted.
  Status Apply(const SparseRows& gradient, int64_t global_step);

  // Apply in two halves, for an owner that applies several tables' rows
  // all or none: a plan (the row of each key found, and the bytes the
  // gradient would take from the budget), then the update, with those
  // bytes already reserved by the caller, which they then belong to.
  // Aborted, nothing applied and the plan's bytes given back, when the
  // table changed since the plan was made.
  struct Plan {
    std::vector<uint32_t> rows;  // per key: its row, or RowIndex::kAbsent
    int64_t new_rows = 0;
    uint64_t bytes = 0;
    uint64_t version = 0;  // the table's when planned
  };
  Plan PlanApply(const SparseRows& gradient) const;
  Status ApplyPlanned(const SparseRows& gradient, const Plan& plan, int64_t global_step);
  // Reserves the plan's bytes in the budget: false when they do not fit.
  // Release gives them back, for a plan that will not be applied.
  bool Reserve(const Plan& plan) { return plan.bytes == 0 || budget_->TryReserve(plan.bytes); }
  void Release(const Plan& plan) { budget_->Release(plan.bytes); }
  // The refusal Apply returns when the plan's bytes do not fit.
  Status OverBudget(const Plan& plan) const;

  // Drops the rows whose last gradient is more than ttl_steps before
  // `global_step`; returns how many. Nothing when ttl_steps is 0.
  int64_t Expire(int64_t global_step);

  // Rows as a checkpoint holds them: keys, and for each key its values
  // then each slot's, dim floats each (row_floats() a key).
  struct RowBlock {
    std::vector<int64_t> keys;
    std::vector<float> values;
  };
  int64_t row_floats() const { return stride_; }
  // Appends to `out` the rows numbered [first, first + count) that hold a
  // key (changed_only: only those a gradient or a write changed since
  // StartDeltas; every row for an optimizer that moves every row) and
  // returns the number to start the next block at; row_end() when done.
  // Rows made or dropped meanwhile may or may not be read: a block is
  // consistent, the table as a whole is read as it trains (as TF's
  // asynchronous checkpoints are).
  int64_t ReadRows(int64_t first, int64_t count, bool delta, RowBlock* out) const;
  int64_t row_end() const;
  // Sets each key's row (values and slots) as given, making the rows it
  // lacks, stamped with `global_step`; keys checked by the caller, unique.
  // ResourceExhausted (nothing written) past the budget.
  Status WriteRows(const RowBlock& rows, int64_t global_step);
  // Removes the keys' rows (a delta checkpoint's expired keys); returns how
  // many there were.
  int64_t EraseRows(const std::vector<int64_t>& keys);
  // The keys Expire dropped since the last StartDeltas (what a delta
  // checkpoint must drop on restore). StartDeltas marks every row unchanged
  // and begins the list anew: a full checkpoint that deltas will follow.
  std::vector<int64_t> DroppedKeys() const;
  void StartDeltas();

  struct Stats {
    int64_t rows = 0;
    int64_t bytes = 0;              // reserved in the budget: index, row blocks, sightings
    int64_t admitted = 0;           // rows made, ever
    int64_t expired = 0;            // rows dropped by Expire, ever
    int64_t pending_keys = 0;       // keys seen fewer than min_count times
    int64_t dropped_gradients = 0;  // rows of gradients dropped before admission
  };
  Stats stats() const;

 private:
  EmbeddingTable(const proto::EmbeddingTableConfig& config, std::unique_ptr<Optimizer> optimizer,
                 std::string ps, MemoryBudget* budget);

  // Where row `row` lives. A row is its key (the header), then its values
  // and each slot's, dim floats each: a lookup that compares the key reads
  // the line the values start on, and no other page. The header is 8
  // bytes, or a cache line where the values and slots are whole lines of
  // 256 bytes or more, which then start on a line of their own (vector
  // loads and stores cross none). The step of each row's last gradient, in
  // 31 bits, and kChanged when it changed since StartDeltas (kFreeRow for
  // no key), lie apart in an array of each block, which Expire and
  // StartDeltas scan without reading the rows.
  static int64_t HeaderFloats(int64_t stride) { return stride >= 64 && stride % 16 == 0 ? 16 : 2; }
  // The floats a row takes: its header and `stride`, rounded to 8 bytes
  // (every key on its own alignment).
  static int64_t RowFloats(int64_t stride) { return (HeaderFloats(stride) + stride + 1) / 2 * 2; }
  // Which block holds row `row`, and its place there.
  struct Place {
    uint32_t block, index;
  };
  Place PlaceOf(uint32_t row) const {
    const auto per_block = static_cast<uint32_t>(rows_per_block_);
    return {row / per_block, row % per_block};
  }
  float* RowStart(uint32_t row) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  float* RowData(uint32_t row) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  int64_t& KeyOf(uint32_t row) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  uint32_t& StepOf(uint32_t row) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  static constexpr uint32_t kFreeRow = UINT32_MAX;
  static constexpr uint32_t kChanged = 1u << 31;
  // The row of `key`, or RowIndex::kAbsent.
  uint32_t FindLocked(int64_t key) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Before the i-th of n keys is found: warms the cache for the ones a few
  // places ahead (their index entries, then their rows' keys and first
  // `floats` values), so that a batch's lookups overlap their memory
  // latency.
  void PrefetchAhead(const int64_t* keys, size_t i, size_t n, int64_t floats) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // A row for `key`: a free one, or the next of the blocks (allocated,
  // with its bytes already reserved), indexed.
  uint32_t NewRowLocked(int64_t key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A push's rows before its update: each absent key (rows[i] kAbsent)
  // admitted once seen min_count times, given a new row, initialized;
  // each row stamped `stamp` and marked changed. A key not admitted stays
  // kAbsent.
  void AdmitRowsLocked(const std::vector<int64_t>& keys, uint32_t stamp,
                       std::vector<uint32_t>* rows) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Gives the key's row back to the free list.
  void FreeRowLocked(int64_t key, uint32_t row) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  Plan PlanLocked(const SparseRows& gradient) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  void ApplyPlannedLocked(const SparseRows& gradient, const Plan& plan, int64_t global_step)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The rows `gradient` makes and the keys it sees for the first time.
  struct Growth {
    int64_t new_rows = 0;
    int64_t new_sightings = 0;
  };
  // The bytes to reserve for that growth.
  uint64_t GrowthBytesLocked(const Growth& growth) const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // Makes the bytes reserved what the table holds now.
  void SettleLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Bytes held by the index, the sightings, the blocks and the dropped
  // keys now.
  uint64_t HeldBytesLocked() const ABSL_SHARED_LOCKS_REQUIRED(mu_);

  const proto::EmbeddingTableConfig config_;
  const std::unique_ptr<Optimizer> optimizer_;
  const std::vector<std::string> slot_names_;
  const std::string ps_;
  MemoryBudget* const budget_;
  const RowInitializer initializer_;
  const int64_t stride_;          // floats of a row's values and slots
  const int64_t header_floats_;   // HeaderFloats(stride_)
  const int64_t row_floats_;      // RowFloats(stride_)
  const uint64_t block_bytes_;    // whole huge pages
  const int64_t rows_per_block_;  // the rows block_bytes_ holds

  struct Block {
    // rows_per_block_ rows of row_floats_ floats (and the few bytes past
    // the last that fill its last page).
    std::unique_ptr<float[], FreeMemory> rows;
    std::unique_ptr<uint32_t[]> steps;  // rows_per_block_
  };
  // What a block holds: its rows and its steps.
  uint64_t BlockHeldBytes() const { return block_bytes_ + rows_per_block_ * sizeof(uint32_t); }

  mutable SharedMutex mu_;
  RowIndex index_ ABSL_GUARDED_BY(mu_);      // key -> row
  KeyIndex sightings_ ABSL_GUARDED_BY(mu_);  // key -> pushes seen, before admission
  std::vector<Block> blocks_ ABSL_GUARDED_BY(mu_);
  int64_t used_rows_ ABSL_GUARDED_BY(mu_) = 0;  // rows handed out from the blocks
  // Rows of dropped keys, each holding the next one's number in its first
  // value (RowIndex::kAbsent ends the list): a free list that costs nothing.
  uint32_t free_head_ ABSL_GUARDED_BY(mu_) = RowIndex::kAbsent;
  std::vector<int64_t> dropped_ ABSL_GUARDED_BY(mu_);  // since StartDeltas
  uint64_t reserved_ ABSL_GUARDED_BY(mu_) = 0;         // bytes taken from budget_
  int64_t update_count_ ABSL_GUARDED_BY(mu_) = 0;
  // Moves with every change to the rows, the index or the sightings: what
  // a plan was made on.
  uint64_t version_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t admitted_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t expired_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t dropped_gradients_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_EMBEDDING_EMBEDDING_TABLE_H_
