// ReplyWriter: a connection's stream (its socket, or the TLS stream over
// it) while a thread of the ps serves one request on it
// (TensorChannelServer). Reads go to the stream. A reply goes out as far as
// the stream takes it at once (ByteStream::WriteNow); what it does not take
// is copied and kept, for the server's event loop to send as the client
// reads (SendKept), so that a client slow to read its reply holds bytes,
// not a thread. Kept bytes come from a budget every connection shares
// (ChannelLimits::max_kept_reply_bytes); a reply past it is written by its
// thread, which waits for the client as on a blocking socket. Bytes
// written after some were kept follow them: the client reads them in
// order. A blocking read of the serving thread first sends what is kept
// (its client may wait for it before it sends more).
//
// Thread-compatible: the serving thread, then the loop.
#ifndef PSTRAIN_PS_TCP_REPLY_WRITER_H_
#define PSTRAIN_PS_TCP_REPLY_WRITER_H_

#include <vector>

#include "core/status.h"
#include "ps/memory_budget.h"
#include "ps/tcp/tensor_frames.h"

namespace pstrain {
namespace tcp {

class ReplyWriter : public ByteStream {
 public:
  // Borrows both: they must outlive the writer (or its next Wrap).
  ReplyWriter(ByteStream* stream, MemoryBudget* budget) : stream_(stream), budget_(budget) {}
  // From now on, the writer's stream is `stream` (the TLS stream over the
  // socket, after the handshake); nothing may be kept.
  void Wrap(ByteStream* stream) { stream_ = stream; }
  ~ReplyWriter() override { Drop(); }
  ReplyWriter(const ReplyWriter&) = delete;
  ReplyWriter& operator=(const ReplyWriter&) = delete;

  Status ReadFull(void* data, size_t n) override;
  // The loop's read, without waiting: only once nothing is kept.
  StatusOr<size_t> ReadSome(void* data, size_t n) override { return stream_->ReadSome(data, n); }
  Status Write(const struct iovec* iov, int count) override;
  Status WriteWithDescriptor(const struct iovec* iov, int count, int fd) override;
  void SetDeadline(std::chrono::steady_clock::time_point when) override {
    stream_->SetDeadline(when);
  }
  Status AwaitData(std::chrono::steady_clock::time_point until) override;
  bool PeerGone() override { return stream_->PeerGone(); }
  int TakeDescriptor() override { return stream_->TakeDescriptor(); }

  // The bytes kept for the loop to send.
  size_t kept() const { return kept_.size() - sent_; }
  // The loop: sends what the stream takes of the kept bytes now, without
  // waiting; true once none is left (their budget given back).
  StatusOr<bool> SendKept();
  // Drops the kept bytes, giving their budget back: the connection closes.
  void Drop();

 private:
  // The serving thread: sends every kept byte, waiting for the client
  // within the stream's deadline.
  Status SendKeptWaiting();

  ByteStream* stream_;
  MemoryBudget* const budget_;
  std::vector<char> kept_;  // reserved in budget_ as a whole
  size_t sent_ = 0;         // of kept_
};

}  // namespace tcp
}  // namespace pstrain

#endif  // PSTRAIN_PS_TCP_REPLY_WRITER_H_
