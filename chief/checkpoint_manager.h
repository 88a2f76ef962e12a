// CheckpointManager: the train dir's checkpoints over time, as TensorFlow's
// Saver keeps them: saves "model.ckpt-STEP", keeps the newest max_to_keep
// (plus one every keep_every_n_hours), deletes the rest, and on start finds
// the newest checkpoint that reads back whole, skipping corrupt ones.
//
// Thread-compatible: the supervisor calls it from one thread.
#ifndef PSTRAIN_CHIEF_CHECKPOINT_MANAGER_H_
#define PSTRAIN_CHIEF_CHECKPOINT_MANAGER_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "chief/checkpoint.h"
#include "core/status.h"
#include "core/tensor.h"

namespace pstrain {

class CheckpointManager {
 public:
  struct Options {
    std::string dir;
    int max_to_keep = 5;
    double keep_every_n_hours = 10000;  // TF's default: effectively never
  };
  // Reads the existing state file, if any, to continue its list.
  explicit CheckpointManager(Options options);

  // Writes model.ckpt-<step> and the state file; deletes checkpoints that
  // fall out of the kept list. Returns the checkpoint's prefix path.
  StatusOr<std::string> Save(int64_t step, const std::map<std::string, Tensor>& tensors);

  // The newest checkpoint that reads back whole. A corrupt or truncated one
  // is logged (the error names the file and the tensor) and the one before
  // it tried. NotFound when there is none.
  StatusOr<Checkpoint> LoadLatest();

  // Step of the newest checkpoint saved or loaded; -1 when none.
  int64_t latest_step() const { return latest_step_; }

 private:
  // Checkpoint base names to try on load, newest first.
  std::vector<std::string> Candidates() const;
  void DeleteCheckpoint(const std::string& base);

  const Options options_;
  std::vector<std::string> kept_;  // base names, oldest first
  int64_t latest_step_ = -1;
  std::chrono::system_clock::time_point last_preserved_;
};

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_CHECKPOINT_MANAGER_H_
