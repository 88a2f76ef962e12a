// CheckpointManager: the train dir's checkpoints over time, as TensorFlow's
// Saver keeps them: saves "model.ckpt-STEP", keeps the newest max_to_keep
// (plus one every keep_every_n_hours), deletes the rest, and on start finds
// the newest checkpoint that reads back whole, skipping corrupt ones. A
// delta checkpoint's full one is kept on disk while a kept delta needs it,
// and a delta whose full one does not read back is skipped.
//
// Thread-compatible: the supervisor calls it from one thread.
#ifndef PSTRAIN_CHIEF_CHECKPOINT_MANAGER_H_
#define PSTRAIN_CHIEF_CHECKPOINT_MANAGER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
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
    FileOps* files = FileOps::Real();   // every file written goes through it
  };
  // Reads the existing state file, if any, to continue its list.
  explicit CheckpointManager(Options options);
  // The format Save writes (pstrain's unless set); kTensorFlow with each
  // tensor's TF name (null: its own). Either is read back.
  void SetFormat(CheckpointFormat format, TfNameFn tf_name) {
    format_ = format;
    tf_name_ = std::move(tf_name);
  }

  // Writes model.ckpt-<step> and the state file; deletes checkpoints that
  // fall out of the kept list. Returns the checkpoint's prefix path.
  // add_tables (may be empty) adds the embedding tables' rows to the
  // writer; with delta_base, the checkpoint is a delta of the full one at
  // that step.
  using AddTables = std::function<Status(CheckpointWriter*)>;
  StatusOr<std::string> Save(int64_t step, const std::map<std::string, Tensor>& tensors,
                             const AddTables& add_tables = nullptr,
                             std::optional<int64_t> delta_base = std::nullopt);

  // The newest checkpoint that reads back whole (a delta: with its full
  // one, in *base). A corrupt or truncated one is logged (the error names
  // the file and the tensor) and the one before it tried. NotFound when
  // there is none.
  StatusOr<Checkpoint> LoadLatest(Checkpoint* base = nullptr);

  // Step of the newest checkpoint saved or loaded; -1 when none.
  int64_t latest_step() const { return latest_step_; }

 private:
  // Checkpoint base names to try on load, newest first.
  std::vector<std::string> Candidates() const;
  void DeleteCheckpoint(const std::string& base);
  // The step of the full checkpoint `base` is a delta of, if it is one.
  std::optional<int64_t> DeltaBaseOf(const std::string& base) const;

  const Options options_;
  CheckpointFormat format_ = CheckpointFormat::kPstrain;
  TfNameFn tf_name_;
  std::vector<std::string> kept_;  // base names, oldest first
  // Dropped from kept_ but still on disk: full checkpoints a kept delta
  // needs.
  std::vector<std::string> needed_;
  int64_t latest_step_ = -1;
  std::chrono::system_clock::time_point last_preserved_;
};

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_CHECKPOINT_MANAGER_H_
