// SharedRegion: memory shared between a task and a ps on its host, the
// tensor channel's way around the kernel's socket copies between them.
//
// The task creates a region as an anonymous memory file (memfd) sealed
// against shrinking (F_SEAL_SHRINK, F_SEAL_GROW, then F_SEAL_SEAL), maps it,
// and hands its descriptor to the ps over the channel's local socket
// (SCM_RIGHTS, beside a ShmAttach frame). The ps maps only a descriptor so
// sealed and at least as large as offered: no one, the task included, can
// then make it shorter, so no access inside the mapping can fault the ps
// (SIGBUS). The region has no name: only the peer it was handed to can map
// it, and it goes with the last mapping or descriptor, crash or not.
//
// Tensors then travel as ShmChunk frames naming a range of the region: the
// sender copies a tensor in, the receiver copies it out into its
// destination; the connection's request-reply order keeps the two from
// touching one range at once.
//
// Thread-compatible.
#ifndef PSTRAIN_PS_TCP_SHARED_REGION_H_
#define PSTRAIN_PS_TCP_SHARED_REGION_H_

#include <cstdint>
#include <memory>
#include <string>

#include "core/status.h"
#include "core/unique_fd.h"

namespace pstrain {
namespace tcp {

class SharedRegion {
 public:
  // The largest region a ps maps.
  static constexpr uint64_t kMaxBytes = uint64_t{1} << 34;

  // A new sealed region of `bytes`, its pages reserved up front (so no room
  // is an error here, not a SIGBUS later). ResourceExhausted or Unavailable
  // naming the failed call.
  static StatusOr<std::unique_ptr<SharedRegion>> Create(uint64_t bytes);
  // Maps the region whose descriptor a peer handed over, as `bytes`.
  // InvalidArgument, naming `what` (for the error), for a descriptor that
  // is not a memory file sealed against shrinking, holds fewer bytes or
  // has not reserved them all, or an offer of 0 or over kMaxBytes.
  static StatusOr<std::unique_ptr<SharedRegion>> Adopt(UniqueFd fd, uint64_t bytes,
                                                       const std::string& what);
  ~SharedRegion();
  SharedRegion(const SharedRegion&) = delete;
  SharedRegion& operator=(const SharedRegion&) = delete;

  uint64_t bytes() const { return bytes_; }
  char* data() const { return data_; }
  // The descriptor to hand to a peer (the creator's; -1 on the ps's side).
  int fd() const { return fd_.get(); }
  // Whether [offset, offset + n) lies inside the region (no overflow).
  bool Holds(uint64_t offset, uint64_t n) const { return offset <= bytes_ && n <= bytes_ - offset; }

 private:
  SharedRegion(UniqueFd fd, uint64_t bytes, char* data)
      : fd_(std::move(fd)), bytes_(bytes), data_(data) {}

  const UniqueFd fd_;
  const uint64_t bytes_;
  char* const data_;
};

}  // namespace tcp
}  // namespace pstrain

#endif  // PSTRAIN_PS_TCP_SHARED_REGION_H_
