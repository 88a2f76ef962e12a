#include "ps/tcp/reply_writer.h"

#include "ps/tcp/iovec_cursor.h"

namespace pstrain {
namespace tcp {

Status ReplyWriter::ReadFull(void* data, size_t n) {
  PS_RETURN_IF_ERROR(SendKeptWaiting());
  return stream_->ReadFull(data, n);
}

Status ReplyWriter::AwaitData(std::chrono::steady_clock::time_point until) {
  PS_RETURN_IF_ERROR(SendKeptWaiting());
  return stream_->AwaitData(until);
}

Status ReplyWriter::Write(const struct iovec* iov, int count) {
  size_t sent = 0;
  if (kept() == 0) {
    PS_ASSIGN_OR_RETURN(sent, stream_->WriteNow(iov, count));
    if (sent == IovecBytes(iov, count)) return OkStatus();
  }
  IovecCursor left(iov, count);
  left.Advance(sent);
  const size_t n = left.bytes();
  if (budget_->TryReserve(n)) {
    kept_.reserve(kept_.size() + n);
    for (int i = 0; i < left.count(); ++i) {
      const char* from = static_cast<const char*>(left.data()[i].iov_base);
      kept_.insert(kept_.end(), from, from + left.data()[i].iov_len);
    }
    return OkStatus();
  }
  // Past the budget: what is kept goes first, then this, as the client
  // reads.
  PS_RETURN_IF_ERROR(SendKeptWaiting());
  return stream_->Write(left.data(), left.count());
}

Status ReplyWriter::WriteWithDescriptor(const struct iovec* iov, int count, int fd) {
  PS_RETURN_IF_ERROR(SendKeptWaiting());
  return stream_->WriteWithDescriptor(iov, count, fd);
}

StatusOr<bool> ReplyWriter::SendKept() {
  if (kept() > 0) {
    struct iovec rest = {kept_.data() + sent_, kept()};
    auto sent = stream_->WriteNow(&rest, 1);
    if (!sent.ok()) {
      Drop();
      return sent.status();
    }
    sent_ += *sent;
    if (kept() > 0) return false;
  }
  Drop();  // all sent: the buffer and its budget go
  return true;
}

Status ReplyWriter::SendKeptWaiting() {
  if (kept() == 0) return OkStatus();
  struct iovec rest = {kept_.data() + sent_, kept()};
  const Status sent = stream_->Write(&rest, 1);
  Drop();
  return sent;
}

void ReplyWriter::Drop() {
  budget_->Release(kept_.size());
  std::vector<char>().swap(kept_);
  sent_ = 0;
}

}  // namespace tcp
}  // namespace pstrain
