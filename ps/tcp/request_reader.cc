#include "ps/tcp/request_reader.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace pstrain {
namespace tcp {

namespace {

// What one read asks for at least: a small request whole, in one call.
constexpr size_t kReadBytes = size_t{64} << 10;

}  // namespace

StatusOr<RequestReader::Gathered> RequestReader::Gather(ByteStream* stream, size_t cap) {
  for (;;) {
    if (whole_ || Parse()) return Gathered::kReady;
    // A frame that would take the request past the cap (a large tensor's)
    // is read by the serving thread, straight into place.
    if (end_ >= cap || (frame_bytes_ > 0 && frame_bytes_ > cap - parsed_)) return Gathered::kReady;
    // What the frame being gathered still lacks, as far as its header
    // says; more if it has come (a small request's next frames).
    const uint64_t have = end_ - parsed_;
    const uint64_t lacking = frame_bytes_ > 0 ? frame_bytes_ - have : kFrameHeaderBytes - have;
    const size_t want = static_cast<size_t>(
        std::min<uint64_t>(std::max<uint64_t>(lacking, kReadBytes), cap - end_));
    const bool between_frames = !mid_frame();
    size_t got;
    if (want <= kReadBytes) {
      // Through the reading thread's scratch: the request then holds what
      // it sent, not a read's worth (a thousand sync pushes of a few KB
      // each, waiting for a thread).
      thread_local std::unique_ptr<char[]> scratch(new char[kReadBytes]);
      PS_ASSIGN_OR_RETURN(got, stream->ReadSome(scratch.get(), want));
      Reserve(got);
      if (got > 0) std::memcpy(buffer_.get() + end_, scratch.get(), got);
    } else {
      Reserve(want);
      PS_ASSIGN_OR_RETURN(got, stream->ReadSome(buffer_.get() + end_, want));
    }
    if (got == 0) return end_ > 0 ? Gathered::kPartial : Gathered::kNothing;
    if (between_frames) frame_begun_ = std::chrono::steady_clock::now();
    end_ += got;
    const int fd = stream->TakeDescriptor();
    if (fd >= 0) {
      descriptor_ = UniqueFd(fd);
      descriptor_end_ = end_;
    }
  }
}

bool RequestReader::Parse() {
  for (;;) {
    const uint64_t have = end_ - parsed_;
    frame_bytes_ = 0;
    frame_data_bytes_ = 0;
    if (have < kFrameHeaderBytes) return false;
    // Not a frame: served as it is, and refused by ReadFrame.
    auto head = ParseFrameHeader(buffer_.get() + parsed_);
    if (!head.ok()) return whole_ = true;
    const FrameKind kind = head->kind;
    frame_data_bytes_ = head->data_bytes;
    const uint64_t before_data = kFrameHeaderBytes + head->meta_bytes;
    frame_bytes_ =
        head->data_bytes < UINT64_MAX - before_data ? before_data + head->data_bytes : UINT64_MAX;
    if (have < frame_bytes_) return false;
    parsed_ += frame_bytes_;
    // The next frame's first bytes came with this one's last.
    if (end_ > parsed_) frame_begun_ = std::chrono::steady_clock::now();
    if (!in_push_) {
      if (kind != FrameKind::kPushHeader) return whole_ = true;  // one frame: a pull, an offer
      in_push_ = true;
      continue;
    }
    // A push ends with its End; a frame no push holds ends it too (refused
    // when served).
    if (kind != FrameKind::kChunk && kind != FrameKind::kShmChunk &&
        kind != FrameKind::kPushHeader) {
      return whole_ = true;
    }
  }
}

void RequestReader::Reserve(size_t n) {
  if (n == 0 || capacity_ - end_ >= n) return;
  const size_t capacity = std::max(end_ + n, capacity_ * 2);
  std::unique_ptr<char[]> grown(new char[capacity]);
  if (end_ > 0) std::memcpy(grown.get(), buffer_.get(), end_);
  buffer_ = std::move(grown);
  capacity_ = capacity;
}

void RequestReader::Served() {
  const size_t left = end_ - read_;
  if (left > 0 && read_ > 0) std::memmove(buffer_.get(), buffer_.get() + read_, left);
  // A descriptor stays only if it came with the next request's bytes.
  if (descriptor_.valid() && descriptor_end_ > read_) {
    descriptor_end_ -= read_;
  } else {
    descriptor_.reset();
  }
  end_ = left;
  read_ = parsed_ = 0;
  whole_ = in_push_ = false;
  frame_bytes_ = frame_data_bytes_ = 0;
  if (left == 0) {  // an idle connection holds no buffer
    buffer_.reset();
    capacity_ = 0;
  } else {
    frame_begun_ = std::chrono::steady_clock::now();
  }
}

Status RequestReader::Stream::ReadFull(void* data, size_t n) {
  const size_t from_buffer = std::min(n, reader_->end_ - reader_->read_);
  if (from_buffer > 0) {
    std::memcpy(data, reader_->buffer_.get() + reader_->read_, from_buffer);
    reader_->read_ += from_buffer;
  }
  if (from_buffer == n) return OkStatus();
  return rest_->ReadFull(static_cast<char*>(data) + from_buffer, n - from_buffer);
}

int RequestReader::Stream::TakeDescriptor() {
  // One that came with a read ending past this request is the next one's.
  if (reader_->whole_ && reader_->descriptor_end_ > reader_->parsed_) return -1;
  return reader_->descriptor_.release();
}

Status RequestReader::Stream::AwaitData(std::chrono::steady_clock::time_point until) {
  return reader_->pending() ? OkStatus() : rest_->AwaitData(until);
}

}  // namespace tcp
}  // namespace pstrain
