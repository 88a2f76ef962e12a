// AtomicFile: writes a file so that a crash at any instant leaves either the
// old file or the complete new one, never a torn one: data goes to
// "<path>.tmp-<pid>", is fsynced, renamed over <path>, and the directory is
// fsynced. Not thread-safe.
#ifndef PSTRAIN_CORE_ATOMIC_FILE_H_
#define PSTRAIN_CORE_ATOMIC_FILE_H_

#include <cstddef>
#include <memory>
#include <string>

#include "core/file_ops.h"
#include "core/status.h"

namespace pstrain {

class AtomicFile {
 public:
  // Opens the temporary file, making every call through `ops`.
  // Unavailable (with errno's text and the path) on failure.
  static StatusOr<std::unique_ptr<AtomicFile>> Create(const std::string& path,
                                                      FileOps* ops = FileOps::Real());
  // Removes the temporary file unless Commit succeeded.
  ~AtomicFile();

  Status Append(const void* data, size_t n);
  // fsync, close, rename, fsync the directory. Call at most once.
  Status Commit();

  const std::string& path() const { return path_; }

 private:
  AtomicFile(std::string path, std::string tmp, int fd, FileOps* ops);
  const std::string path_, tmp_path_;
  FileOps* const ops_;
  int fd_;
  bool committed_ = false;
};

// Test seam for crash injection: the process _exits with kCrashExitCode at
// the n-th write point from now (every Append, the fsync, the rename and the
// directory fsync are one each); n <= 0 disables. Tests call it in a forked
// child to crash a checkpoint write at each point in turn.
constexpr int kCrashExitCode = 86;
void CrashAtWritePointForTest(int n);

// Whole-file helpers.
Status WriteFileAtomically(const std::string& path, const std::string& contents,
                           FileOps* ops = FileOps::Real());
StatusOr<std::string> ReadFileToString(const std::string& path);

}  // namespace pstrain

#endif  // PSTRAIN_CORE_ATOMIC_FILE_H_
