#include "chief/table_checkpoints.h"

#include <glog/logging.h>

#include <set>
#include <string>

namespace pstrain {
namespace {

// A saved table's blocks, for PsFleet::ImportTable.
class SavedRows : public PsFleet::RowSource {
 public:
  explicit SavedRows(std::unique_ptr<TableRowsReader> reader) : reader_(std::move(reader)) {}
  StatusOr<bool> Next(proto::RowBlock* block) override { return reader_->Next(block); }

 private:
  std::unique_ptr<TableRowsReader> reader_;
};

}  // namespace

Status RestoreTables(PsFleet* fleet, const Checkpoint& ckpt, const Checkpoint* full) {
  std::set<std::string> known;
  for (const proto::EmbeddingTableConfig& t : fleet->tables()) known.insert(t.name());
  for (const Checkpoint* c : {full, &ckpt}) {
    if (c == nullptr) continue;
    for (const proto::TableCheckpoint& table : c->tables) {
      if (!known.count(table.name())) {
        LOG(WARNING) << c->prefix << ": embedding table " << table.name()
                     << " is not the model's; not restored";
        continue;
      }
      const std::string what = "restoring embedding table " + table.name() + " from " + c->prefix;
      auto reader = TableRowsReader::Open(c->prefix, table);
      if (!reader.ok()) return reader.status().Annotate(what);
      SavedRows rows(std::move(*reader));
      PS_RETURN_IF_ERROR(fleet->ImportTable(&rows).Annotate(what));
      LOG(INFO) << "restored " << table.num_rows() << " rows of embedding table " << table.name()
                << " from " << c->prefix << " over " << fleet->num_ps() << " ps tasks";
    }
  }
  return OkStatus();
}

Status SaveTables(PsFleet* fleet, CheckpointWriter* writer, bool delta, bool start_deltas) {
  for (const proto::EmbeddingTableConfig& table : fleet->tables()) {
    bool begun = false;
    PS_RETURN_IF_ERROR(fleet->ExportTable(
        table.name(), delta, start_deltas, [&](const proto::ExportRowsResponse& reply) {
          if (!begun) {
            PS_RETURN_IF_ERROR(writer->BeginTable(
                table.name(), reply.dim(), {reply.slot_names().begin(), reply.slot_names().end()}));
            begun = true;
          }
          return writer->AddRows(reply.block());
        }));
  }
  return OkStatus();
}

}  // namespace pstrain
