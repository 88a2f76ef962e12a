// EmbeddingTables: one ps task's shards of the embedding tables, updated
// together: a push's rows of every table are applied all or none, and every
// table takes part in every push, as every variable of a TF optimizer takes
// part in each apply_gradients (one without rows in the push counts the
// update, Adam's t, and TF's sparse Adam decays its rows). Expiry (a table's
// ttl_steps) runs as the step advances, every ttl_steps / 8 steps at least,
// so a row outlives its last gradient by at most ttl_steps + ttl_steps / 8
// steps.
//
// Thread contract: the set of tables is fixed when made; Find and the
// tables' lookups run on any thread, beside updates (each table's own lock
// orders them). Every change (Apply, CheckFits, ApplyFitting, WriteRows,
// EraseRows, StartDeltas) takes this set's update lock, so a push's plans
// for its tables are applied on the state they were made on.
#ifndef PSTRAIN_PS_EMBEDDING_EMBEDDING_TABLES_H_
#define PSTRAIN_PS_EMBEDDING_EMBEDDING_TABLES_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/mutex.h"
#include "core/status.h"
#include "proto/ps.pb.h"
#include "ps/embedding/embedding_table.h"
#include "ps/embedding/sparse_rows.h"
#include "ps/memory_budget.h"

namespace pstrain {

class EmbeddingTables {
 public:
  // The tables of `configs`, empty, each having had `update_count`
  // updates (a restore at that step). InvalidArgument for a bad config or
  // a name that repeats or that `taken` says a variable holds. Borrows
  // budget, which must outlive the tables.
  static StatusOr<std::unique_ptr<EmbeddingTables>> Make(
      const std::vector<proto::EmbeddingTableConfig>& configs,
      const proto::OptimizerConfig& optimizer, const std::string& ps, MemoryBudget* budget,
      int64_t update_count, const std::function<bool(const std::string&)>& taken);

  bool empty() const { return tables_.empty(); }
  // The table of that name; NotFound naming it.
  StatusOr<EmbeddingTable*> Find(const std::string& table) const;
  // OK when every table of `sparse` is here and its rows are [keys, dim].
  Status Check(const std::map<std::string, SparseRows>& sparse) const;

  // Applies `sparse` (checked; unique keys) at `step`, every table taking
  // part: all or none, ResourceExhausted naming the table whose new rows
  // do not fit the budget.
  Status Apply(const std::map<std::string, SparseRows>& sparse, int64_t step);
  // What Apply would refuse for the budget, changing nothing.
  Status CheckFits(const std::map<std::string, SparseRows>& sparse);
  // Apply, leaving out each table whose rows do not fit (a completed sync
  // step, which cannot be refused): each left out is logged and counted in
  // rows_refused.
  void ApplyFitting(std::map<std::string, SparseRows> sparse, int64_t step);

  // A restore's writes and erasures, and the start of delta checkpoints,
  // serialized with the updates. NotFound for an unknown table.
  Status WriteRows(const std::string& table, const EmbeddingTable::RowBlock& rows, int64_t step);
  StatusOr<int64_t> EraseRows(const std::string& table, const std::vector<int64_t>& keys);
  Status StartDeltas(const std::string& table);

  struct TableStats {
    std::string name;
    int dim = 0;
    EmbeddingTable::Stats stats;
  };
  std::vector<TableStats> stats() const;
  int64_t bytes() const;
  // Tables' rows ApplyFitting left out.
  int64_t rows_refused() const { return rows_refused_.load(); }

 private:
  explicit EmbeddingTables(std::map<std::string, std::unique_ptr<EmbeddingTable>> tables)
      : tables_(std::move(tables)) {}
  // Plans each table's update and reserves the bytes it needs, all or
  // none: the plans, or ResourceExhausted naming the table that does not
  // fit.
  StatusOr<std::map<std::string, EmbeddingTable::Plan>> ReserveLocked(
      const std::map<std::string, SparseRows>& sparse) ABSL_EXCLUSIVE_LOCKS_REQUIRED(update_mu_);
  // Applies the reserved plans at `step`, then lets expiry run.
  void ApplyPlansLocked(const std::map<std::string, SparseRows>& sparse,
                        const std::map<std::string, EmbeddingTable::Plan>& plans, int64_t step)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(update_mu_);

  const std::map<std::string, std::unique_ptr<EmbeddingTable>> tables_;
  Mutex update_mu_;
  std::map<std::string, int64_t> last_expiry_ ABSL_GUARDED_BY(update_mu_);  // table -> step
  std::atomic<int64_t> rows_refused_{0};
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_EMBEDDING_EMBEDDING_TABLES_H_
