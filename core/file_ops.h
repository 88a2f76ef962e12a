// FileOps: the file system calls a durable write makes (AtomicFile, and so
// every checkpoint), behind an interface, so that a test can make them fail
// as a full disk or a failing fsync would, where a real disk cannot be made
// to on demand. Each returns what its system call does (-1 with errno set
// on failure). FileOps::Real() makes the calls themselves.
#ifndef PSTRAIN_CORE_FILE_OPS_H_
#define PSTRAIN_CORE_FILE_OPS_H_

#include <sys/types.h>

#include <cstddef>
#include <string>

namespace pstrain {

class FileOps {
 public:
  virtual ~FileOps() = default;
  virtual int Open(const std::string& path, int flags, mode_t mode);
  virtual ssize_t Write(int fd, const void* data, size_t n);
  virtual int Fsync(int fd);
  virtual int Close(int fd);
  virtual int Rename(const std::string& from, const std::string& to);
  virtual int Unlink(const std::string& path);

  // The process's own calls; never null, never destroyed.
  static FileOps* Real();
};

}  // namespace pstrain

#endif  // PSTRAIN_CORE_FILE_OPS_H_
