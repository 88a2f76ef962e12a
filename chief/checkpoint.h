// Checkpoint files, written by the chief, read by the chief and the tools.
//
// A checkpoint "model.ckpt-STEP" in a train dir is two files, or three with
// embedding tables:
//   model.ckpt-STEP.data   every tensor's raw little-endian bytes, back to back
//   model.ckpt-STEP.rows   the tables' rows in blocks (proto/checkpoint.proto:
//                          RowBlockEntry), streamed in as the ps tasks send
//                          them: no table is ever whole in the chief's memory
//   model.ckpt-STEP.index  "PSCKPT01", u64 length L, L bytes of a
//                          CheckpointIndex proto, u32 masked CRC32C of them
// each tensor and each block of rows carrying its own CRC32C in the index.
// The data and the rows are written first, then the index, then the
// "checkpoint" state file naming the latest and the kept checkpoints, each
// through AtomicFile (temporary name, fsync, rename): a crash at any
// instant leaves the previous checkpoint whole.
//
// In TensorFlow's format (CheckpointFormat::kTensorFlow) the tensors and
// global_step are a TF tensor bundle instead (chief/tf_bundle.h:
// model.ckpt-STEP.index and .data-00000-of-00001), each under its TF name (a
// slot as TF names it: ".../Adagrad", ".../Adam_1"), and pstrain's index of
// the rest (tables, delta base, the TF names that differ) is
// model.ckpt-STEP.pstrain; the rows, then .pstrain, then the bundle are
// committed, the bundle's index last.
//
// A delta checkpoint (delta_base_step set) holds whole variables but only
// the rows changed since a full checkpoint, and the keys dropped since:
// a restore reads the full one's tables, then the delta's.
#ifndef PSTRAIN_CHIEF_CHECKPOINT_H_
#define PSTRAIN_CHIEF_CHECKPOINT_H_

#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/atomic_file.h"
#include "core/status.h"
#include "core/tensor.h"
#include "proto/checkpoint.pb.h"
#include "proto/ps.pb.h"

namespace pstrain {

struct Checkpoint {
  int64_t global_step = 0;
  std::map<std::string, Tensor> tensors;
  // Embedding tables: what they are and where their blocks lie; the rows
  // stay in the file until a TableRowsReader reads them.
  std::string prefix;
  std::vector<proto::TableCheckpoint> tables;
  std::optional<int64_t> delta_base_step;
};

enum class CheckpointFormat { kPstrain, kTensorFlow };

// A tensor's name in a TensorFlow checkpoint, given pstrain's.
using TfNameFn = std::function<std::string(const std::string&)>;

// Writes one checkpoint: tensors, then tables block by block. Nothing of it
// is visible (every file has a temporary name) until Finish. One writer per
// format behind this interface: pstrain's (its tensors in "<prefix>.data",
// its index in "<prefix>.index") and TensorFlow's (a tensor bundle, and
// pstrain's index beside it in "<prefix>.pstrain"). pstrain's keeps the
// tables' rows, with their optimizer slots, in "<prefix>.rows", which is
// what a restore reads.
//
// In TensorFlow's format a full checkpoint holds each table in the bundle
// instead, as TF's hash tables export theirs: "<table>-keys" (int64 [rows])
// and "<table>-values" (float [rows, dim], the rows without their slots),
// and each slot as "<table>/<slot>-values" (float [rows, dim]), in the order
// the ps tasks sent them; the index keeps each block's first row and
// CRC32C, and where the tensors start, for a restore. The values stream
// into the bundle as the blocks arrive and the keys and slots wait in
// temporary files until the table ends, so no table is ever held in memory
// and none is written twice. A delta checkpoint's rows go to the rows file.
//
// Thread-compatible.
class CheckpointWriter {
 public:
  // tf_name (kTensorFlow only; null: every name as it is). Every file is
  // written through `ops`.
  static StatusOr<std::unique_ptr<CheckpointWriter>> Create(
      const std::string& dir, int64_t step, CheckpointFormat format = CheckpointFormat::kPstrain,
      TfNameFn tf_name = nullptr, FileOps* ops = FileOps::Real());
  virtual ~CheckpointWriter();

  virtual Status AddTensor(const std::string& name, const Tensor& tensor) = 0;
  // The following AddRows belong to this table (a row: dim x (1 + slots)
  // floats).
  Status BeginTable(const std::string& name, int dim, const std::vector<std::string>& slot_names);
  // One block of the current table as a ps sent it (proto::RowBlock's
  // bytes): InvalidArgument when the values are not a whole row per key.
  Status AddRows(const proto::RowBlock& block);
  // Makes this a delta checkpoint of the full one at `step`; before any
  // BeginTable.
  void SetDeltaBase(int64_t step) { index_.set_delta_base_step(step); }
  // Commits the tensors and the rows, then the index; returns the prefix.
  virtual StatusOr<std::string> Finish() = 0;

 protected:
  CheckpointWriter(std::string prefix, int64_t step, FileOps* ops);
  // Where a format keeps a table's rows: at the table's start, and with
  // each block (already checked, not empty, `row_bytes` a row with its
  // slots), which it records in `table`'s blocks.
  virtual Status TableBegun(const proto::TableCheckpoint& table) = 0;
  virtual Status RowsAdded(proto::TableCheckpoint* table, const proto::RowBlock& block,
                           uint64_t rows, uint64_t row_bytes) = 0;
  // The block's CRC32C as the index keeps it: of its keys, then its values.
  static uint32_t BlockCrc(const proto::RowBlock& block);
  // Appends the block to the rows file, recording it in `table`.
  Status AppendToRowsFile(proto::TableCheckpoint* table, const proto::RowBlock& block,
                          uint64_t rows);
  // Commits the rows file (if any rows came); the index then names it.
  Status CommitRows();

  const std::string prefix_;
  FileOps* const ops_;
  proto::CheckpointIndex index_;

 private:
  std::unique_ptr<AtomicFile> rows_;
  uint64_t rows_bytes_ = 0;
};

// A table's blocks from a checkpoint's rows file (or, for a table in a
// TensorFlow bundle, from its tensors), one at a time, each checked
// against its CRC32C and its extent before it is returned.
class TableRowsReader {
 public:
  static StatusOr<std::unique_ptr<TableRowsReader>> Open(const std::string& prefix,
                                                         const proto::TableCheckpoint& table);
  // The next block (its table set); false at the end. DataLoss naming the
  // file, the table and the block.
  StatusOr<bool> Next(proto::RowBlock* block);

 private:
  TableRowsReader(std::string path, const proto::TableCheckpoint& table, uint64_t file_bytes);
  // A block of a table in a bundle: its keys, and its values and each
  // slot's from their tensors, into a row block's layout.
  Status ReadFromBundle(const proto::RowBlockEntry& e, const std::string& where, std::string* keys,
                        std::string* values);

  const std::string path_;
  const proto::TableCheckpoint table_;
  const uint64_t file_bytes_;
  std::ifstream in_;
  int next_ = 0;
};

// "model.ckpt-1200"
std::string CheckpointName(int64_t step);

// Writes <dir>/model.ckpt-<step>.{data,index}; returns the prefix path.
StatusOr<std::string> WriteCheckpoint(
    const std::string& dir, int64_t step,
    const std::vector<std::pair<std::string, const Tensor*>>& tensors);

// Reads and verifies a checkpoint from its prefix path: its tensors, and of
// its tables what they are (their rows file's length is checked, each
// block's bytes when read). DataLoss naming the file (and the tensor) for a
// bad magic, a truncated file or a CRC mismatch. A TensorFlow checkpoint
// (PREFIX.data-00000-of-00001 beside the index, chief/tf_bundle.h) gives its
// float tensors and its global_step, with ReadTfBundle's errors.
StatusOr<Checkpoint> ReadCheckpoint(const std::string& prefix);
// The index alone, verified.
StatusOr<proto::CheckpointIndex> ReadCheckpointIndex(const std::string& prefix);

// The "checkpoint" state file, in TensorFlow's text form:
//   model_checkpoint_path: "model.ckpt-1200"
//   all_model_checkpoint_paths: "model.ckpt-1000"
//   all_model_checkpoint_paths: "model.ckpt-1200"
struct CheckpointState {
  std::string latest;             // base name
  std::vector<std::string> kept;  // base names, oldest first
};
Status WriteCheckpointState(const std::string& dir, const CheckpointState& state,
                            FileOps* ops = FileOps::Real());
// NotFound when the train dir has no state file.
StatusOr<CheckpointState> ReadCheckpointState(const std::string& dir);

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_CHECKPOINT_H_
