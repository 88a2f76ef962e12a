// RequestReader: the bytes of a connection's next tensor channel request,
// gathered without waiting as they come, on TensorChannelServer's event
// loop. The loop reads whatever a readable connection has; a pool thread
// serves the request only once it is whole, reading it from memory through
// RequestReader::Stream. So a client that trickles its bytes, or streams a
// push's tensors as backward computes them, holds no thread meanwhile.
//
// What the loop holds is bounded: a request that would hold more than `cap`
// bytes (a large tensor's push) is served once its frame that crosses the
// cap begins, its thread reading the rest from the connection as it comes
// (straight into place, under the frames' deadlines).
//
// Not thread-safe: the loop gathers, then the one thread serving the
// request reads; never both at once.
#ifndef PSTRAIN_PS_TCP_REQUEST_READER_H_
#define PSTRAIN_PS_TCP_REQUEST_READER_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/status.h"
#include "core/unique_fd.h"
#include "ps/tcp/tensor_frames.h"

namespace pstrain {
namespace tcp {

class RequestReader {
 public:
  // What the ps's loop gathers of one request at most (ChannelLimits).
  static constexpr size_t kDefaultCap = size_t{1} << 20;

  enum class Gathered {
    kNothing,  // no byte of a request yet
    kPartial,  // a request begun, not whole and under the cap
    kReady,    // whole, or `cap` bytes of it: to be served now
  };

  // Reads what `stream` has now (ByteStream::ReadSome) until the request
  // is whole, the frame begun would take it past `cap` bytes, or nothing
  // more has come. A
  // header that is not a frame's ends the request there: serving it finds
  // the error and tells the client. Unavailable when the client hung up or
  // the connection broke.
  StatusOr<Gathered> Gather(ByteStream* stream, size_t cap);

  // Bytes held (memory, until Served).
  size_t held() const { return capacity_; }
  // Whether bytes of a request wait to be served.
  bool pending() const { return end_ > read_; }
  // When the frame being gathered must be whole (FrameTimeouts): its first
  // byte came at `begun`, and it carries `data_bytes` of data (0 until its
  // header is here). Between two frames of a push, mid_frame() is false.
  bool mid_frame() const { return end_ > parsed_; }
  std::chrono::steady_clock::time_point frame_begun() const { return frame_begun_; }
  uint64_t frame_data_bytes() const { return frame_data_bytes_; }

  // After the request was served: forgets its bytes, keeping what came
  // after them (the next request's), and gives back the memory when none
  // did.
  void Served();

  // The request as its serving thread reads it: the gathered bytes, then
  // `rest` (the connection), which also takes every write.
  class Stream : public ByteStream {
   public:
    Stream(RequestReader* reader, ByteStream* rest) : reader_(reader), rest_(rest) {}
    Status ReadFull(void* data, size_t n) override;
    Status Write(const struct iovec* iov, int count) override { return rest_->Write(iov, count); }
    Status WriteWithDescriptor(const struct iovec* iov, int count, int fd) override {
      return rest_->WriteWithDescriptor(iov, count, fd);
    }
    void SetDeadline(std::chrono::steady_clock::time_point when) override {
      rest_->SetDeadline(when);
    }
    Status AwaitData(std::chrono::steady_clock::time_point until) override;
    bool PeerGone() override { return rest_->PeerGone(); }
    // The descriptor that came with this request's bytes (-1: none), never
    // one of an earlier request's.
    int TakeDescriptor() override;

   private:
    RequestReader* const reader_;
    ByteStream* const rest_;
  };

 private:
  // Parses the frames now whole; true once the request is.
  bool Parse();
  // Makes room for n more bytes.
  void Reserve(size_t n);

  std::unique_ptr<char[]> buffer_;  // not zeroed: only [0, end_) is read
  size_t capacity_ = 0;
  size_t read_ = 0;    // served so far
  size_t end_ = 0;     // bytes in buffer_
  size_t parsed_ = 0;  // where the first frame not yet whole begins
  // The descriptor that came with the read that ended at descriptor_end_:
  // the request those bytes end in owns it (a sender passes it beside the
  // first byte of its request, and a read ends with the bytes it came with).
  UniqueFd descriptor_;
  size_t descriptor_end_ = 0;
  bool whole_ = false;
  bool in_push_ = false;  // past a PushHeader: frames until End
  std::chrono::steady_clock::time_point frame_begun_;
  uint64_t frame_data_bytes_ = 0;
  uint64_t frame_bytes_ = 0;  // the frame being gathered, header included (0: unknown yet)
};

}  // namespace tcp
}  // namespace pstrain

#endif  // PSTRAIN_PS_TCP_REQUEST_READER_H_
