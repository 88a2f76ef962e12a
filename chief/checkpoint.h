// Checkpoint files, written by the chief, read by the chief and the tools.
//
// A checkpoint "model.ckpt-STEP" in a train dir is two files:
//   model.ckpt-STEP.data   every tensor's raw little-endian bytes, back to back
//   model.ckpt-STEP.index  "PSCKPT01", u64 length L, L bytes of a
//                          CheckpointIndex proto, u32 masked CRC32C of them
// each tensor carrying its own CRC32C in the index. The data is written
// first, then the index, then the "checkpoint" state file naming the latest
// and the kept checkpoints, each through AtomicFile (temporary name, fsync,
// rename): a crash at any instant leaves the previous checkpoint whole.
#ifndef PSTRAIN_CHIEF_CHECKPOINT_H_
#define PSTRAIN_CHIEF_CHECKPOINT_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"

namespace pstrain {

struct Checkpoint {
  int64_t global_step = 0;
  std::map<std::string, Tensor> tensors;
};

// "model.ckpt-1200"
std::string CheckpointName(int64_t step);

// Writes <dir>/model.ckpt-<step>.{data,index}; returns the prefix path.
StatusOr<std::string> WriteCheckpoint(
    const std::string& dir, int64_t step,
    const std::vector<std::pair<std::string, const Tensor*>>& tensors);

// Reads and verifies a checkpoint from its prefix path. DataLoss naming the
// file (and the tensor) for a bad magic, a truncated file or a CRC mismatch.
StatusOr<Checkpoint> ReadCheckpoint(const std::string& prefix);

// The "checkpoint" state file, in TensorFlow's text form:
//   model_checkpoint_path: "model.ckpt-1200"
//   all_model_checkpoint_paths: "model.ckpt-1000"
//   all_model_checkpoint_paths: "model.ckpt-1200"
struct CheckpointState {
  std::string latest;             // base name
  std::vector<std::string> kept;  // base names, oldest first
};
Status WriteCheckpointState(const std::string& dir, const CheckpointState& state);
// NotFound when the train dir has no state file.
StatusOr<CheckpointState> ReadCheckpointState(const std::string& dir);

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_CHECKPOINT_H_
