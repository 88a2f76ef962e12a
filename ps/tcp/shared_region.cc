#include "ps/tcp/shared_region.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>

namespace pstrain {
namespace tcp {
namespace {

std::string Errno(const std::string& call) { return call + ": " + std::strerror(errno); }

// A name no other region of this host has: the pid, a counter and a random
// tag (a pid reused after a crash finds no stale object of its own).
std::string NewName(bool arena) {
  static std::atomic<uint64_t> counter{0};
  std::random_device random;
  return std::string(SharedRegion::kNamePrefix) + (arena ? SharedRegion::kArenaTag : "") +
         std::to_string(getpid()) + "-" + std::to_string(counter++) + "-" +
         std::to_string(random());
}

// Maps fd's `bytes` read-write, and closes fd.
StatusOr<char*> MapAndClose(int fd, uint64_t bytes, const std::string& name) {
  void* data = bytes == 0 ? nullptr
                          : mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const std::string failed = data == MAP_FAILED ? Errno("mmap " + name) : "";
  close(fd);
  if (!failed.empty()) return ResourceExhausted(failed);
  return static_cast<char*>(data);
}

}  // namespace

StatusOr<std::unique_ptr<SharedRegion>> SharedRegion::Create(uint64_t bytes, bool arena) {
  if (bytes == 0 || bytes > kMaxBytes) {
    return InvalidArgument("shared region of " + std::to_string(bytes) + " bytes");
  }
  const std::string name = NewName(arena);
  const int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0) return Unavailable(Errno("shm_open " + name));
  const int reserved = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (reserved != 0) {
    close(fd);
    shm_unlink(name.c_str());
    return ResourceExhausted("posix_fallocate " + name + " (" + std::to_string(bytes) +
                             " bytes): " + std::strerror(reserved));
  }
  auto data = MapAndClose(fd, bytes, name);
  if (!data.ok()) {
    shm_unlink(name.c_str());
    return data.status();
  }
  std::unique_ptr<SharedRegion> region(new SharedRegion(name, bytes, *data));
  region->linked_ = true;
  return region;
}

StatusOr<std::unique_ptr<SharedRegion>> SharedRegion::Open(const std::string& name,
                                                           uint64_t bytes) {
  const std::string prefix = kNamePrefix;
  if (name.compare(0, prefix.size(), prefix) != 0 || name.size() > 200 ||
      name.find('/', 1) != std::string::npos) {
    return InvalidArgument("shared region name '" + name.substr(0, 200) + "' is not one of " +
                           prefix + "...");
  }
  if (bytes == 0 || bytes > kMaxBytes) {
    return InvalidArgument("shared region of " + std::to_string(bytes) + " bytes (at most " +
                           std::to_string(kMaxBytes) + ")");
  }
  const int fd = shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) {
    return errno == ENOENT ? NotFound(Errno("shm_open " + name))
                           : Unavailable(Errno("shm_open " + name));
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size < 0 || static_cast<uint64_t>(st.st_size) != bytes) {
    close(fd);
    return InvalidArgument("shared region " + name + " is not " + std::to_string(bytes) +
                           " bytes");
  }
  PS_ASSIGN_OR_RETURN(char* data, MapAndClose(fd, bytes, name));
  return std::unique_ptr<SharedRegion>(new SharedRegion(name, bytes, data));
}

void SharedRegion::Unlink() {
  if (!linked_) return;
  shm_unlink(name_.c_str());
  linked_ = false;
}

void SharedRegion::RemoveOrphans() {
  // shm_open's names live in /dev/shm on Linux (glibc), without the slash.
  const std::string prefix = std::string(kNamePrefix).substr(1) + kArenaTag;
  DIR* dir = opendir("/dev/shm");
  if (dir == nullptr) return;
  while (const struct dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    char* end = nullptr;
    const long pid = std::strtol(name.c_str() + prefix.size(), &end, 10);
    if (end == name.c_str() + prefix.size() || *end != '-' || pid <= 0) continue;
    if (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) shm_unlink(("/" + name).c_str());
  }
  closedir(dir);
}

SharedRegion::~SharedRegion() {
  Unlink();
  if (data_ != nullptr) munmap(data_, bytes_);
}

}  // namespace tcp
}  // namespace pstrain
