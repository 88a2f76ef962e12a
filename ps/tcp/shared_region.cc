#include "ps/tcp/shared_region.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace pstrain {
namespace tcp {
namespace {

std::string Errno(const std::string& call) { return call + ": " + std::strerror(errno); }

constexpr unsigned int kSeals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;

StatusOr<char*> Map(int fd, uint64_t bytes) {
  void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (data == MAP_FAILED) return ResourceExhausted(Errno("mmap of a shared region"));
  return static_cast<char*>(data);
}

}  // namespace

StatusOr<std::unique_ptr<SharedRegion>> SharedRegion::Create(uint64_t bytes) {
  if (bytes == 0 || bytes > kMaxBytes) {
    return InvalidArgument("shared region of " + std::to_string(bytes) + " bytes");
  }
  UniqueFd fd(memfd_create("pstrain-region", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd.valid()) return Unavailable(Errno("memfd_create"));
  if (ftruncate(fd.get(), static_cast<off_t>(bytes)) != 0) {
    return ResourceExhausted(Errno("ftruncate of a shared region to " + std::to_string(bytes)));
  }
  const int reserved = posix_fallocate(fd.get(), 0, static_cast<off_t>(bytes));
  if (reserved != 0) {
    return ResourceExhausted("posix_fallocate of a shared region (" + std::to_string(bytes) +
                             " bytes): " + std::strerror(reserved));
  }
  if (fcntl(fd.get(), F_ADD_SEALS, kSeals) != 0) return Unavailable(Errno("F_ADD_SEALS"));
  PS_ASSIGN_OR_RETURN(char* data, Map(fd.get(), bytes));
  return std::unique_ptr<SharedRegion>(new SharedRegion(std::move(fd), bytes, data));
}

StatusOr<std::unique_ptr<SharedRegion>> SharedRegion::Adopt(UniqueFd fd, uint64_t bytes,
                                                            const std::string& what) {
  if (bytes == 0 || bytes > kMaxBytes) {
    return InvalidArgument(what + " of " + std::to_string(bytes) + " bytes (at most " +
                           std::to_string(kMaxBytes) + ")");
  }
  // Only a memory file can be sealed; a file whose size anyone else could
  // still cut (no F_SEAL_SHRINK) could fault this process at any access.
  const int seals = fcntl(fd.get(), F_GET_SEALS);
  if (seals < 0 || (seals & F_SEAL_SHRINK) == 0) {
    return InvalidArgument(what + " is not a memory file sealed against shrinking");
  }
  struct stat st;
  if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0 ||
      static_cast<uint64_t>(st.st_size) < bytes) {
    return InvalidArgument(what + " holds " + std::to_string(st.st_size) +
                           " bytes, fewer than the " + std::to_string(bytes) + " offered");
  }
  // Its pages reserved by its maker (Create does): none of the memory the
  // ps writes into it is then charged to the ps.
  if (static_cast<uint64_t>(st.st_blocks) * 512 < bytes) {
    return InvalidArgument(what + " has " + std::to_string(st.st_blocks * 512) + " of the " +
                           std::to_string(bytes) + " bytes offered in memory (reserve them first)");
  }
  PS_ASSIGN_OR_RETURN(char* data, Map(fd.get(), bytes));
  // The mapping keeps the memory; the descriptor is not needed any more.
  return std::unique_ptr<SharedRegion>(new SharedRegion(UniqueFd(), bytes, data));
}

SharedRegion::~SharedRegion() { munmap(data_, bytes_); }

}  // namespace tcp
}  // namespace pstrain
