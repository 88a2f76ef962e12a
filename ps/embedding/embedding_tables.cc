#include "ps/embedding/embedding_tables.h"

#include <glog/logging.h>

#include <algorithm>

namespace pstrain {

StatusOr<std::unique_ptr<EmbeddingTables>> EmbeddingTables::Make(
    const std::vector<proto::EmbeddingTableConfig>& configs,
    const proto::OptimizerConfig& optimizer, const std::string& ps, MemoryBudget* budget,
    int64_t update_count, const std::function<bool(const std::string&)>& taken) {
  std::map<std::string, std::unique_ptr<EmbeddingTable>> tables;
  for (const proto::EmbeddingTableConfig& config : configs) {
    if (taken(config.name()) || tables.count(config.name())) {
      return InvalidArgument("embedding table " + config.name() +
                             " is named as a variable or another table");
    }
    PS_ASSIGN_OR_RETURN(std::unique_ptr<EmbeddingTable> table,
                        EmbeddingTable::Create(config, optimizer, ps, budget));
    table->SetUpdateCount(update_count);
    tables.emplace(config.name(), std::move(table));
  }
  return std::unique_ptr<EmbeddingTables>(new EmbeddingTables(std::move(tables)));
}

StatusOr<EmbeddingTable*> EmbeddingTables::Find(const std::string& table) const {
  auto it = tables_.find(table);
  if (it == tables_.end()) return NotFound("no embedding table " + table + " on this ps");
  return it->second.get();
}

Status EmbeddingTables::Check(const std::map<std::string, SparseRows>& sparse) const {
  for (const auto& [name, rows] : sparse) {
    auto it = tables_.find(name);
    if (it == tables_.end()) return NotFound("rows for unknown embedding table " + name);
    const Shape expected = {static_cast<int64_t>(rows.keys.size()), it->second->dim()};
    if (rows.rows.shape() != expected) {
      return InvalidArgument("rows for embedding table " + name + " have shape " +
                             ShapeString(rows.rows.shape()) + ", " +
                             std::to_string(rows.keys.size()) + " keys of dim " +
                             std::to_string(it->second->dim()) + " need " + ShapeString(expected));
    }
  }
  return OkStatus();
}

Status EmbeddingTables::Apply(const std::map<std::string, SparseRows>& sparse, int64_t step) {
  if (tables_.empty()) return OkStatus();
  MutexLock lock(&update_mu_);
  PS_ASSIGN_OR_RETURN(auto plans, ReserveLocked(sparse));
  ApplyPlansLocked(sparse, plans, step);
  return OkStatus();
}

Status EmbeddingTables::CheckFits(const std::map<std::string, SparseRows>& sparse) {
  if (sparse.empty()) return OkStatus();
  MutexLock lock(&update_mu_);
  PS_ASSIGN_OR_RETURN(auto plans, ReserveLocked(sparse));
  for (const auto& [name, plan] : plans) tables_.at(name)->Release(plan);
  return OkStatus();
}

void EmbeddingTables::ApplyFitting(std::map<std::string, SparseRows> sparse, int64_t step) {
  if (tables_.empty()) return;
  MutexLock lock(&update_mu_);
  std::map<std::string, EmbeddingTable::Plan> plans;
  for (auto it = sparse.begin(); it != sparse.end();) {
    auto one = ReserveLocked({{it->first, it->second}});
    if (one.ok()) {
      plans[it->first] = std::move(one->at(it->first));
      ++it;
      continue;
    }
    ++rows_refused_;
    LOG(ERROR) << one.status().ToString() << " (sync step " << step
               << "'s rows of this table are dropped)";
    it = sparse.erase(it);
  }
  ApplyPlansLocked(sparse, plans, step);
}

StatusOr<std::map<std::string, EmbeddingTable::Plan>> EmbeddingTables::ReserveLocked(
    const std::map<std::string, SparseRows>& sparse) {
  std::map<std::string, EmbeddingTable::Plan> plans;
  for (const auto& [name, rows] : sparse) {
    EmbeddingTable& table = *tables_.at(name);
    EmbeddingTable::Plan plan = table.PlanApply(rows);
    if (!table.Reserve(plan)) {
      for (const auto& [done, p] : plans) tables_.at(done)->Release(p);
      return table.OverBudget(plan);
    }
    plans.emplace(name, std::move(plan));
  }
  return plans;
}

void EmbeddingTables::ApplyPlansLocked(const std::map<std::string, SparseRows>& sparse,
                                       const std::map<std::string, EmbeddingTable::Plan>& plans,
                                       int64_t step) {
  for (const auto& [name, table] : tables_) {
    auto it = sparse.find(name);
    // Under update_mu_ no other change comes between a plan and its
    // application: the table refuses none of them.
    Status applied;
    if (it != sparse.end()) {
      applied = table->ApplyPlanned(it->second, plans.at(name), step);
    } else {
      SparseRows none;
      none.rows = Tensor({0, table->dim()});
      applied = table->ApplyPlanned(none, table->PlanApply(none), step);
    }
    CHECK(applied.ok()) << applied.ToString();
  }
  for (const auto& [name, table] : tables_) {
    const int64_t ttl = table->config().ttl_steps();
    if (ttl <= 0) continue;
    int64_t& last = last_expiry_[name];
    if (step - last < std::max<int64_t>(1, ttl / 8)) continue;
    last = step;
    table->Expire(step);
  }
}

Status EmbeddingTables::WriteRows(const std::string& table, const EmbeddingTable::RowBlock& rows,
                                  int64_t step) {
  PS_ASSIGN_OR_RETURN(EmbeddingTable * t, Find(table));
  PS_RETURN_IF_ERROR(t->CheckKeys(rows.keys));
  MutexLock lock(&update_mu_);
  return t->WriteRows(rows, step);
}

StatusOr<int64_t> EmbeddingTables::EraseRows(const std::string& table,
                                             const std::vector<int64_t>& keys) {
  PS_ASSIGN_OR_RETURN(EmbeddingTable * t, Find(table));
  MutexLock lock(&update_mu_);
  return t->EraseRows(keys);
}

Status EmbeddingTables::StartDeltas(const std::string& table) {
  PS_ASSIGN_OR_RETURN(EmbeddingTable * t, Find(table));
  MutexLock lock(&update_mu_);
  t->StartDeltas();
  return OkStatus();
}

std::vector<EmbeddingTables::TableStats> EmbeddingTables::stats() const {
  std::vector<TableStats> out;
  for (const auto& [name, table] : tables_) out.push_back({name, table->dim(), table->stats()});
  return out;
}

int64_t EmbeddingTables::bytes() const {
  int64_t n = 0;
  for (const auto& [name, table] : tables_) n += table->stats().bytes;
  return n;
}

}  // namespace pstrain
