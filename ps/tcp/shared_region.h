// SharedRegion: a POSIX shared memory object mapped into this process, the
// tensor channel's way around the kernel's socket copies between tasks on
// one host (the data-plane issue's item 4: loopback TCP alone costs more
// CPU per byte than its bar allows).
//
// The client creates a region, offers its name on a connection (an
// ShmAttach frame), and unlinks the name once the ps has mapped it or
// refused: the object lives as long as either mapping, and after a crash of
// either side nothing is left in /dev/shm (but for a crash of the client in
// the moment between creating a region and the ps's answer). Tensors then travel as ShmChunk
// frames naming a range of the region: the sender copies a tensor in, the
// receiver copies it out into its destination; the connection's
// request-reply order keeps the two from touching one range at once.
//
// Thread-compatible.
#ifndef PSTRAIN_PS_TCP_SHARED_REGION_H_
#define PSTRAIN_PS_TCP_SHARED_REGION_H_

#include <cstdint>
#include <memory>
#include <string>

#include "core/status.h"

namespace pstrain {
namespace tcp {

class SharedRegion {
 public:
  // The largest region a ps maps for one connection.
  static constexpr uint64_t kMaxBytes = uint64_t{1} << 34;
  // Every name starts so; the ps opens no other.
  static constexpr char kNamePrefix[] = "/pstrain-shm-";

  // A new region of `bytes`, its pages reserved up front (so a full
  // /dev/shm is an error here, not a SIGBUS later). ResourceExhausted or
  // Unavailable naming the failed call.
  // An arena's name says so (kArenaTag after the prefix), for RemoveOrphans.
  static StatusOr<std::unique_ptr<SharedRegion>> Create(uint64_t bytes, bool arena = false);
  static constexpr char kArenaTag[] = "arena-";
  // Maps the region a client named. InvalidArgument for a name outside
  // kNamePrefix or a size over kMaxBytes or unlike the object's;
  // NotFound when there is no such object (another host or container).
  static StatusOr<std::unique_ptr<SharedRegion>> Open(const std::string& name, uint64_t bytes);
  ~SharedRegion();
  SharedRegion(const SharedRegion&) = delete;
  SharedRegion& operator=(const SharedRegion&) = delete;

  const std::string& name() const { return name_; }
  uint64_t bytes() const { return bytes_; }
  char* data() const { return data_; }
  // Whether [offset, offset + n) lies inside the region (no overflow).
  bool Holds(uint64_t offset, uint64_t n) const { return offset <= bytes_ && n <= bytes_ - offset; }
  // Removes the name (the creator, once the peer has answered).
  void Unlink();
  // Removes the names in /dev/shm of arenas whose creator (the pid in the
  // name) has exited: what a crashed task left behind. (A connection's
  // region loses its name at once; and a task in another PID namespace
  // that shares /dev/shm may look gone.)
  static void RemoveOrphans();

 private:
  SharedRegion(std::string name, uint64_t bytes, char* data)
      : name_(std::move(name)), bytes_(bytes), data_(data) {}

  const std::string name_;
  const uint64_t bytes_;
  char* const data_;
  bool linked_ = false;  // the creator's name is still in /dev/shm
};

}  // namespace tcp
}  // namespace pstrain

#endif  // PSTRAIN_PS_TCP_SHARED_REGION_H_
