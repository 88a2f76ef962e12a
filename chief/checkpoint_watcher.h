// CheckpointWatcher: which checkpoints of a train dir are new since the last
// look, for the evaluator (TensorFlow's checkpoints_iterator in miniature).
//
// A checkpoint counts as present once its .index file exists: the chief
// writes the data, then the index, each by rename (chief/checkpoint.h), so an
// index on disk means both files are whole unless something corrupted them
// later. The names come from the "checkpoint" state file and, as a fallback
// for a missing or malformed state file or a crash between a checkpoint and
// the state file, from the *.index files in the directory.
//
// Thread-compatible: one thread calls it.
#ifndef PSTRAIN_CHIEF_CHECKPOINT_WATCHER_H_
#define PSTRAIN_CHIEF_CHECKPOINT_WATCHER_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"

namespace pstrain {

// The step of a checkpoint base name "model.ckpt-STEP"; -1 for another name.
int64_t CheckpointStep(const std::string& base);

class CheckpointWatcher {
 public:
  explicit CheckpointWatcher(std::string train_dir) : dir_(std::move(train_dir)) {}

  // Base names ("model.ckpt-1200") of the checkpoints present now that no
  // earlier call returned, oldest (lowest step) first; each name is returned
  // once, even if its files are later rewritten. A checkpoint deleted
  // (max_to_keep) before a call saw it is never returned. A train dir that
  // does not exist yet has no checkpoints. Unavailable, with the error's
  // text, if the directory exists but cannot be listed. A state file that
  // cannot be read is logged and the index files used.
  StatusOr<std::vector<std::string>> NewCheckpoints();

  const std::string& dir() const { return dir_; }

 private:
  const std::string dir_;
  std::set<std::string> returned_;  // every base name returned so far
};

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_CHECKPOINT_WATCHER_H_
