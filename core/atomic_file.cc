#include "core/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace pstrain {
namespace {

Status ErrnoStatus(const std::string& what, const std::string& path) {
  return IoError(what + " " + path + ": " + std::strerror(errno));
}

std::string DirName(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

int crash_countdown = 0;  // see CrashAtWritePointForTest

// One write point passes; crashes the process when the countdown ends.
void WritePoint() {
  if (crash_countdown > 0 && --crash_countdown == 0) _exit(kCrashExitCode);
}

}  // namespace

void CrashAtWritePointForTest(int n) { crash_countdown = n; }

AtomicFile::AtomicFile(std::string path, std::string tmp, int fd, FileOps* ops)
    : path_(std::move(path)), tmp_path_(std::move(tmp)), ops_(ops), fd_(fd) {}

StatusOr<std::unique_ptr<AtomicFile>> AtomicFile::Create(const std::string& path, FileOps* ops) {
  std::string tmp = path + ".tmp-" + std::to_string(getpid());
  int fd = ops->Open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus("cannot create", tmp);
  return std::unique_ptr<AtomicFile>(new AtomicFile(path, std::move(tmp), fd, ops));
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ops_->Close(fd_);
  if (!committed_) ops_->Unlink(tmp_path_);
}

Status AtomicFile::Append(const void* data, size_t n) {
  WritePoint();
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ops_->Write(fd_, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("cannot write", tmp_path_);
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return OkStatus();
}

Status AtomicFile::Commit() {
  WritePoint();
  if (ops_->Fsync(fd_) != 0) return ErrnoStatus("cannot fsync", tmp_path_);
  if (ops_->Close(fd_) != 0) {
    fd_ = -1;
    return ErrnoStatus("cannot close", tmp_path_);
  }
  fd_ = -1;
  WritePoint();
  if (ops_->Rename(tmp_path_, path_) != 0) return ErrnoStatus("cannot rename", tmp_path_);
  committed_ = true;
  WritePoint();
  const std::string dir = DirName(path_);
  int dfd = ops_->Open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
  if (dfd < 0) return ErrnoStatus("cannot open directory", dir);
  int rc = ops_->Fsync(dfd);
  ops_->Close(dfd);
  if (rc != 0) return ErrnoStatus("cannot fsync directory", dir);
  return OkStatus();
}

Status WriteFileAtomically(const std::string& path, const std::string& contents, FileOps* ops) {
  PS_ASSIGN_OR_RETURN(auto file, AtomicFile::Create(path, ops));
  PS_RETURN_IF_ERROR(file->Append(contents.data(), contents.size()));
  return file->Commit();
}

StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot open " + path + ": " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return IoError("cannot read " + path);
  return ss.str();
}

}  // namespace pstrain
