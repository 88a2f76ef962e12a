// The tensor channel's wire format: Push and Pull as frames on a plain TCP
// stream, each tensor's bytes sent from and received into the tensor's own
// memory (writev; one read into the destination), with none of gRPC's
// framing, copies and thread hand-offs on the data path. gRPC keeps every
// other call, and stays the fallback (ps/rpc/ps_client.h).
//
// A frame: a 24-byte header (magic "PSTF", kind, meta_bytes, 0, data_bytes;
// little-endian), meta_bytes of a serialized protobuf message that depends
// on the kind, then data_bytes of tensor data (chunk frames only).
//
//   push:  PushHeader(PushHeader) Chunk(TensorChunk, data)... End
//          reply: PushReply(PushResponse) or Error(ChannelError)
//   on connecting: Hello from the ps, or Error when it refuses the
//          connection (with TLS it closes instead)
//   pull:  PullRequest(PullRequest)
//          reply: PullReply(PullResponse) Chunk(TensorChunk, data)... End,
//          or Error(ChannelError)
//   shared memory, between tasks on one host (shared_region.h):
//          ShmAttach(ShmAttach); reply: ShmAttachReply(ShmAttachReply).
//          Once attached, any Chunk of a push or of a pull's reply may be
//          a ShmChunk(ShmChunk) instead, its bytes in the region.
//          ShmAttachArena(ShmAttach); reply: ShmAttachReply: the client's
//          arena (shared_arena.h), beside the region; a ShmChunk may then
//          lie in it (in_arena), and a pull may name where in it each
//          variable goes (PullRequest.arena_rooms), as may a push for
//          the values after it (PushHeader.arena_rooms).
//
// A chunk frame's TensorChunk holds no data: the frame's data is the chunk's.
// After an Error the ps closes the connection.
#ifndef PSTRAIN_PS_TCP_TENSOR_FRAMES_H_
#define PSTRAIN_PS_TCP_TENSOR_FRAMES_H_

#include <google/protobuf/message_lite.h>
#include <sys/uio.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "proto/tensor.pb.h"
#include "ps/tcp/shared_region.h"
#include "ps/tensor_chunks.h"

namespace pstrain {
namespace tcp {

enum class FrameKind : uint32_t {
  kPushHeader = 1,
  kChunk = 2,
  kEnd = 3,
  kPullRequest = 4,
  kPullReply = 5,
  kPushReply = 6,
  kError = 7,
  kShmAttach = 8,
  kShmAttachReply = 9,
  kShmChunk = 10,
  // A new kind rather than a field of ShmAttach: a ps from before the arena
  // refuses it instead of mapping the arena as the connection's region.
  kShmAttachArena = 11,
  // The ps's first frame on a connection it takes (after the TLS
  // handshake): the client sends its first request only once it has come,
  // so a refusal (an Error frame instead) is known before any request.
  kHello = 12,
};
const char* FrameKindName(FrameKind kind);

constexpr uint32_t kFrameMagic = 0x46545350;  // "PSTF" as little-endian bytes
constexpr size_t kFrameHeaderBytes = 24;
// Metadata is a header, a tensor's name and shape, or a list of names; a
// request's embedding keys (EmbeddingTable::kMaxKeysPerRequest, 8 MiB) are
// the most it holds.
constexpr uint32_t kMaxMetaBytes = 16 << 20;

// A byte stream both ways: a TCP or local connection, or bytes in memory
// (fuzz/).
class ByteStream {
 public:
  virtual ~ByteStream() = default;
  // Reads exactly n bytes. Unavailable when the stream ends or breaks first;
  // DeadlineExceeded past the stream's deadline.
  virtual Status ReadFull(void* data, size_t n) = 0;
  // Reads what has come, up to n bytes, without waiting: 0 when nothing
  // has. Unavailable when the stream ended or broke; Unimplemented where
  // every read waits.
  virtual StatusOr<size_t> ReadSome(void* data, size_t n) {
    (void)data, (void)n;
    return Unimplemented("this stream cannot read without waiting");
  }
  // Writes every byte of the buffers, in order.
  virtual Status Write(const struct iovec* iov, int count) = 0;
  // Writes what the stream takes now, without waiting: the bytes taken,
  // from the first (0 when it takes none). Unimplemented where every write
  // waits. A stream that took part of a buffer it must send whole (a TLS
  // record) takes the same bytes again first, from wherever they lie.
  virtual StatusOr<size_t> WriteNow(const struct iovec* iov, int count) {
    (void)iov, (void)count;
    return Unimplemented("this stream cannot write without waiting");
  }
  // Reads and writes fail with DeadlineExceeded once `when` has passed
  // (time_point::max(): never).
  virtual void SetDeadline(std::chrono::steady_clock::time_point when) { (void)when; }
  // Waits until a byte can be read, the stream ends, or `until` passes
  // (DeadlineExceeded).
  virtual Status AwaitData(std::chrono::steady_clock::time_point until) {
    (void)until;
    return OkStatus();
  }
  // Whether the peer has hung up (or the connection broke): a request
  // still waiting to be answered can give up.
  virtual bool PeerGone() { return false; }
  // As Write, with a file descriptor passed beside the first byte (over a
  // local connection: SCM_RIGHTS). Unimplemented where it cannot be.
  virtual Status WriteWithDescriptor(const struct iovec* iov, int count, int fd) {
    (void)iov, (void)count, (void)fd;
    return Unimplemented("this stream cannot pass descriptors");
  }
  // The descriptor that came with the bytes read last (at most one is
  // kept); -1 when none did, whatever came with an earlier read. The
  // caller owns it.
  virtual int TakeDescriptor() { return -1; }
};

// A frame's header and metadata; its data_bytes of data are still to be
// read from the stream (into wherever they belong).
struct Frame {
  FrameKind kind;
  std::string meta;
  uint64_t data_bytes = 0;
};

// What a frame's 24-byte header says: its kind, and the bytes of metadata
// and of data that follow it.
struct FrameHeader {
  FrameKind kind;
  uint32_t meta_bytes = 0;
  uint64_t data_bytes = 0;
};
// InvalidArgument for a header that is not a frame's (wrong magic, an
// unknown kind, metadata over kMaxMetaBytes, data on a frame other than a
// chunk).
StatusOr<FrameHeader> ParseFrameHeader(const char* header);
// The stream's next frame: ParseFrameHeader's errors, or the stream's
// when it ends first.
StatusOr<Frame> ReadFrame(ByteStream* stream);
// Parses a frame's metadata as `message`'s type, or InvalidArgument.
Status ParseMeta(const Frame& frame, google::protobuf::MessageLite* message);
// Frames written together: one gathered write for a whole request or
// reply, each frame's data sent from where it is in memory (which must stay
// unchanged until WriteTo returns).
class FrameBatch {
 public:
  // A frame: header, `meta` serialized (none when null), then [data, data + n).
  void Add(FrameKind kind, const google::protobuf::MessageLite* meta, const char* data = nullptr,
           uint64_t n = 0);
  // The chunk frames of a whole tensor, its values as `wire` says: DT_FLOAT
  // straight from its memory, DT_BFLOAT16 rounded into a buffer the batch
  // keeps (the chunk's dtype, offset and total_bytes then count bfloat16s).
  void AddTensor(const std::string& name, const Tensor& tensor, proto::DataType wire);
  // A ShmChunk frame for a whole float32 tensor, copied into `region` at
  // [offset, offset + tensor.bytes()), which the caller checked it holds.
  void AddShmTensor(const std::string& name, const Tensor& tensor, const SharedRegion& region,
                    uint64_t offset);
  // A ShmChunk frame for a whole float32 tensor that already lies in the
  // client's arena at `offset` (copied there by the caller, or kept there):
  // nothing is copied.
  void AddArenaTensor(const std::string& name, const Tensor& tensor, uint64_t offset);
  Status WriteTo(ByteStream* stream) const { return stream->Write(iov_.data(), iov_.size()); }
  // WriteTo with a descriptor passed beside the first byte.
  Status WriteTo(ByteStream* stream, int fd) const {
    return stream->WriteWithDescriptor(iov_.data(), static_cast<int>(iov_.size()), fd);
  }
  // WriteTo, then empties the batch for the frames that follow: so the
  // peer can start on a tensor in shared memory while the next is copied.
  Status WriteAndClear(ByteStream* stream);

 private:
  // The ShmChunk frame of a whole float32 tensor at `offset`.
  void AddShmChunk(const std::string& name, const Tensor& tensor, uint64_t offset, bool in_arena);

  std::deque<std::string> heads_;              // a deque: the iovecs point into them
  std::deque<std::vector<uint16_t>> rounded_;  // bfloat16 copies being sent
  std::vector<struct iovec> iov_;
};

// Reads a Chunk frame's tensor data (after ReadFrame) into the tensor that
// `assembler` places it in; bfloat16 data is widened to float32 there.
Status ReadChunk(ByteStream* stream, const Frame& frame, TensorAssembler* assembler);

// What a connection's ShmChunk frames may name: its region, and the
// client's arena (either may be absent: null).
struct SharedMemory {
  const SharedRegion* region = nullptr;
  const SharedRegion* arena = nullptr;
};
// How a ShmChunk's tensor is taken out of shared memory: copied into the
// tensor the assembler places it in (nothing to copy when that tensor is
// where the bytes lie: the client's own, in its arena), or left there, the
// assembled tensor a view of them (for a reader done with it before the
// peer may write there again: a ps applying a push before it replies).
enum class ShmRead { kCopy, kView };
// Reads a ShmChunk frame's tensor out of shared memory into `assembler`;
// the bytes it took from the connection's region (none from the arena).
// InvalidArgument when the region or arena it names is
// absent, the range lies outside it, or the tensor is not float32.
StatusOr<uint64_t> ReadShmChunk(const Frame& frame, const SharedMemory& shared,
                                TensorAssembler* assembler, ShmRead how = ShmRead::kCopy);

// Writes one frame as FrameBatch::Add describes.
Status WriteFrame(ByteStream* stream, FrameKind kind, const google::protobuf::MessageLite* meta,
                  const char* data = nullptr, uint64_t n = 0);
// Reads the ps's greeting on a new connection: OkStatus for its Hello, the
// status of its Error frame when it refused the connection, DataLoss for
// another frame, or the stream's error.
Status ReadHello(ByteStream* stream);
// An Error frame carrying `status` (its code, hint and message), and the
// Status an Error frame carries.
Status WriteError(ByteStream* stream, const Status& status);
Status ErrorOf(const Frame& frame);

}  // namespace tcp
}  // namespace pstrain

#endif  // PSTRAIN_PS_TCP_TENSOR_FRAMES_H_
