#include "core/file_ops.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

namespace pstrain {

int FileOps::Open(const std::string& path, int flags, mode_t mode) {
  return ::open(path.c_str(), flags, mode);
}
ssize_t FileOps::Write(int fd, const void* data, size_t n) { return ::write(fd, data, n); }
int FileOps::Fsync(int fd) { return ::fsync(fd); }
int FileOps::Close(int fd) { return ::close(fd); }
int FileOps::Rename(const std::string& from, const std::string& to) {
  return std::rename(from.c_str(), to.c_str());
}
int FileOps::Unlink(const std::string& path) { return ::unlink(path.c_str()); }

FileOps* FileOps::Real() {
  static FileOps* const real = new FileOps;
  return real;
}

}  // namespace pstrain
