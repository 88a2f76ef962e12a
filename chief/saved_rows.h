// SavedRows: the embedding rows of a checkpoint, held in memory to evaluate
// a model of ids or columns without the ps tasks (the evaluator task). A
// delta checkpoint's rows are its full base's with the delta applied, as a
// restore applies them. Only the values are kept, not the optimizer slots.
//
// Thread safety: const after Read.
#ifndef PSTRAIN_CHIEF_SAVED_ROWS_H_
#define PSTRAIN_CHIEF_SAVED_ROWS_H_

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "chief/checkpoint.h"
#include "core/status.h"
#include "proto/ps.pb.h"
#include "ps/client/ps_fleet.h"

namespace pstrain {

class SavedRows {
 public:
  // The rows of `tables` (the model's) in `ckpt`, read from the files of
  // `train_dir` (a delta's base checkpoint too). A table the checkpoint
  // lacks has no saved rows (every key its initial value). The readers'
  // errors (DataLoss naming the file, table and block); InvalidArgument for
  // a saved table of another dimension.
  static StatusOr<SavedRows> Read(const Checkpoint& ckpt, const std::string& train_dir,
                                  const std::vector<proto::EmbeddingTableConfig>& tables);

  // Fills each step's rows for its unique ids: the saved row, or the
  // table's initial value for a key without one (as a ps answers it).
  // InvalidArgument for a table Read was not given.
  Status Pull(std::vector<PsFleet::TableStep>* steps) const;

  int64_t rows(const std::string& table) const;
  // The saved rows of `table` by ascending key (none for a table Read was
  // not given); valid while this object lives.
  std::vector<std::pair<int64_t, const std::vector<float>*>> SortedRows(
      const std::string& table) const;

 private:
  struct Table {
    proto::EmbeddingTableConfig config;
    std::unordered_map<int64_t, std::vector<float>> rows;
  };
  // Applies one checkpoint's blocks of `table` (a delta's erase blocks
  // remove keys).
  static Status Apply(const Checkpoint& ckpt, const proto::TableCheckpoint& saved, Table* table);

  std::map<std::string, Table> tables_;
};

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_SAVED_ROWS_H_
