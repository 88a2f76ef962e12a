#include "chief/training_done.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "chief/checkpoint_watcher.h"
#include "core/atomic_file.h"

namespace pstrain {
namespace {

std::string MarkPath(const std::string& train_dir) {
  return (std::filesystem::path(train_dir) / kTrainingDoneFile).string();
}

}  // namespace

Status MarkTrainingDone(const std::string& train_dir, const std::string& final_base) {
  return WriteFileAtomically(MarkPath(train_dir), final_base + "\n");
}

Status ClearTrainingDone(const std::string& train_dir) {
  const std::string path = MarkPath(train_dir);
  if (std::remove(path.c_str()) != 0 && errno != ENOENT) {
    return IoError("cannot remove " + path + ": " + std::strerror(errno));
  }
  return OkStatus();
}

StatusOr<int64_t> FinalCheckpointStep(const std::string& train_dir) {
  const std::string path = MarkPath(train_dir);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return int64_t{-1};
  PS_ASSIGN_OR_RETURN(std::string contents, ReadFileToString(path));
  while (!contents.empty() && (contents.back() == '\n' || contents.back() == '\r')) {
    contents.pop_back();
  }
  const int64_t step = CheckpointStep(contents);
  if (step < 0) return DataLoss(path + " names no checkpoint: \"" + contents + "\"");
  return step;
}

}  // namespace pstrain
