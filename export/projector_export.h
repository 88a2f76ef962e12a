// Embedding tables for TensorBoard's projector: per table, the vectors and
// their keys as TSV files, and the projector_config.pbtxt that points the
// projector plugin at them, so `tensorboard --logdir=DIR` shows them.
//
//   DIR/projector_config.pbtxt
//   DIR/<table, with '/' as '_'>/vectors.tsv    one row per line, tab-separated
//   DIR/<table, with '/' as '_'>/metadata.tsv   the row's key, line for line
//
// Only the rows the checkpoint holds are written (a row never trained is
// its initial value), by ascending key. Each file is written atomically.
#ifndef PSTRAIN_EXPORT_PROJECTOR_EXPORT_H_
#define PSTRAIN_EXPORT_PROJECTOR_EXPORT_H_

#include <string>
#include <vector>

#include "chief/saved_rows.h"
#include "core/status.h"
#include "proto/ps.pb.h"

namespace pstrain {

// The rows of `tables` in `rows` into `dir` (made if missing). The rows
// written per table, in tables' order.
StatusOr<std::vector<int64_t>> WriteProjectorFiles(
    const std::string& dir, const SavedRows& rows,
    const std::vector<proto::EmbeddingTableConfig>& tables);

}  // namespace pstrain

#endif  // PSTRAIN_EXPORT_PROJECTOR_EXPORT_H_
