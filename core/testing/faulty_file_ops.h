// FaultyFileOps: the real file system calls (FileOps::Real), failing on
// demand as a full disk (writes: ENOSPC) or a failing disk (fsync: EIO)
// would, until healed. For tests of what a writer leaves behind then.
#ifndef PSTRAIN_CORE_TESTING_FAULTY_FILE_OPS_H_
#define PSTRAIN_CORE_TESTING_FAULTY_FILE_OPS_H_

#include <atomic>
#include <cerrno>

#include "core/file_ops.h"

namespace pstrain {
namespace testing {

class FaultyFileOps : public FileOps {
 public:
  // Every write from now fails with `error` (0: none).
  void FailWrites(int error) { write_error_ = error; }
  // Every fsync from now fails with `error` (0: none).
  void FailFsyncs(int error) { fsync_error_ = error; }
  void Heal() {
    write_error_ = 0;
    fsync_error_ = 0;
  }
  int failures() const { return failures_; }

  ssize_t Write(int fd, const void* data, size_t n) override {
    if (Fails(write_error_)) return -1;
    return FileOps::Write(fd, data, n);
  }
  int Fsync(int fd) override {
    if (Fails(fsync_error_)) return -1;
    return FileOps::Fsync(fd);
  }

 private:
  bool Fails(int error) {
    if (error == 0) return false;
    ++failures_;
    errno = error;
    return true;
  }

  std::atomic<int> write_error_{0}, fsync_error_{0}, failures_{0};
};

}  // namespace testing
}  // namespace pstrain

#endif  // PSTRAIN_CORE_TESTING_FAULTY_FILE_OPS_H_
