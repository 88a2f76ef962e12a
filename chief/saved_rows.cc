#include "chief/saved_rows.h"

#include <algorithm>
#include <cstring>

#include "ps/embedding/row_initializer.h"
#include "ps/embedding/sparse_rows.h"

namespace pstrain {

Status SavedRows::Apply(const Checkpoint& ckpt, const proto::TableCheckpoint& saved, Table* table) {
  const int dim = table->config.dim();
  if (saved.dim() != dim) {
    return InvalidArgument(ckpt.prefix + ": table " + saved.name() + " has rows of " +
                           std::to_string(saved.dim()) + ", the model " + std::to_string(dim));
  }
  const int64_t stride = int64_t{dim} * (1 + saved.slot_names_size());
  PS_ASSIGN_OR_RETURN(auto reader, TableRowsReader::Open(ckpt.prefix, saved));
  proto::RowBlock block;
  for (;;) {
    PS_ASSIGN_OR_RETURN(bool more, reader->Next(&block));
    if (!more) return OkStatus();
    PS_ASSIGN_OR_RETURN(std::vector<int64_t> keys,
                        DecodeKeys(block.keys(), ckpt.prefix + ": table " + saved.name()));
    if (block.erase()) {
      for (int64_t key : keys) table->rows.erase(key);
      continue;
    }
    if (block.values().size() != keys.size() * stride * sizeof(float)) {
      return DataLoss(ckpt.prefix + ": table " + saved.name() + ": a block of " +
                      std::to_string(keys.size()) + " keys holds " +
                      std::to_string(block.values().size()) + " bytes of rows");
    }
    for (size_t i = 0; i < keys.size(); ++i) {
      std::vector<float>& row = table->rows[keys[i]];
      row.resize(dim);
      std::memcpy(row.data(), block.values().data() + i * stride * sizeof(float),
                  dim * sizeof(float));
    }
  }
}

StatusOr<SavedRows> SavedRows::Read(const Checkpoint& ckpt, const std::string& train_dir,
                                    const std::vector<proto::EmbeddingTableConfig>& tables) {
  SavedRows saved;
  for (const proto::EmbeddingTableConfig& config : tables)
    saved.tables_[config.name()].config = config;
  // A delta holds what changed since its full base: the base's rows first.
  std::vector<const Checkpoint*> order;
  Checkpoint base;
  if (ckpt.delta_base_step) {
    PS_ASSIGN_OR_RETURN(base,
                        ReadCheckpoint(train_dir + "/" + CheckpointName(*ckpt.delta_base_step)));
    order.push_back(&base);
  }
  order.push_back(&ckpt);
  for (const Checkpoint* c : order) {
    for (const proto::TableCheckpoint& t : c->tables) {
      auto it = saved.tables_.find(t.name());
      if (it != saved.tables_.end()) PS_RETURN_IF_ERROR(Apply(*c, t, &it->second));
    }
  }
  return saved;
}

Status SavedRows::Pull(std::vector<PsFleet::TableStep>* steps) const {
  for (PsFleet::TableStep& step : *steps) {
    auto it = tables_.find(step.table);
    if (it == tables_.end()) return InvalidArgument("no saved rows of table " + step.table);
    const Table& table = it->second;
    const proto::EmbeddingTableConfig& c = table.config;
    const RowInitializer initial = RowInitializer::Of(c);
    const int64_t n = static_cast<int64_t>(step.ids.keys.size());
    step.rows = Tensor({n, c.dim()}, Tensor::kUninitialized);
    for (int64_t i = 0; i < n; ++i) {
      float* out = step.rows.data() + i * c.dim();
      auto row = table.rows.find(step.ids.keys[i]);
      if (row == table.rows.end()) {
        initial.Fill(step.ids.keys[i], out);
      } else {
        std::memcpy(out, row->second.data(), c.dim() * sizeof(float));
      }
    }
  }
  return OkStatus();
}

int64_t SavedRows::rows(const std::string& table) const {
  auto it = tables_.find(table);
  return it == tables_.end() ? 0 : static_cast<int64_t>(it->second.rows.size());
}

std::vector<std::pair<int64_t, const std::vector<float>*>> SavedRows::SortedRows(
    const std::string& table) const {
  std::vector<std::pair<int64_t, const std::vector<float>*>> sorted;
  auto it = tables_.find(table);
  if (it == tables_.end()) return sorted;
  sorted.reserve(it->second.rows.size());
  for (const auto& [key, row] : it->second.rows) sorted.emplace_back(key, &row);
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return sorted;
}

}  // namespace pstrain
