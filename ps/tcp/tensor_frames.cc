#include "ps/tcp/tensor_frames.h"

#include <cstring>

#include "core/bfloat16.h"
#include "core/halves.h"
#include "proto/ps.pb.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "frames are little-endian");

namespace pstrain {
namespace tcp {

namespace {

// Each tensor goes out as one chunk frame up to this size.
constexpr uint32_t kChunkFrameBytes = 1u << 30;

struct RawHeader {
  uint32_t magic;
  uint32_t kind;
  uint32_t meta_bytes;
  uint32_t reserved;
  uint64_t data_bytes;
};
static_assert(sizeof(RawHeader) == kFrameHeaderBytes, "no padding in the frame header");

bool KnownKind(uint32_t kind) {
  return kind >= static_cast<uint32_t>(FrameKind::kPushHeader) &&
         kind <= static_cast<uint32_t>(FrameKind::kHello);
}

}  // namespace

const char* FrameKindName(FrameKind kind) {
  switch (kind) {
    case FrameKind::kPushHeader:
      return "PushHeader";
    case FrameKind::kChunk:
      return "Chunk";
    case FrameKind::kEnd:
      return "End";
    case FrameKind::kPullRequest:
      return "PullRequest";
    case FrameKind::kPullReply:
      return "PullReply";
    case FrameKind::kPushReply:
      return "PushReply";
    case FrameKind::kError:
      return "Error";
    case FrameKind::kShmAttach:
      return "ShmAttach";
    case FrameKind::kShmAttachReply:
      return "ShmAttachReply";
    case FrameKind::kShmChunk:
      return "ShmChunk";
    case FrameKind::kShmAttachArena:
      return "ShmAttachArena";
    case FrameKind::kHello:
      return "Hello";
  }
  return "unknown";
}

StatusOr<FrameHeader> ParseFrameHeader(const char* header) {
  RawHeader raw;
  std::memcpy(&raw, header, sizeof(raw));
  if (raw.magic != kFrameMagic) return InvalidArgument("not a tensor channel frame (bad magic)");
  if (!KnownKind(raw.kind)) {
    return InvalidArgument("unknown tensor channel frame kind " + std::to_string(raw.kind));
  }
  FrameHeader head;
  head.kind = static_cast<FrameKind>(raw.kind);
  if (raw.meta_bytes > kMaxMetaBytes) {
    return InvalidArgument(std::string(FrameKindName(head.kind)) + " frame with " +
                           std::to_string(raw.meta_bytes) + " bytes of metadata (at most " +
                           std::to_string(kMaxMetaBytes) + ")");
  }
  if (raw.data_bytes != 0 && head.kind != FrameKind::kChunk) {
    return InvalidArgument(std::string(FrameKindName(head.kind)) + " frame carrying data");
  }
  head.meta_bytes = raw.meta_bytes;
  head.data_bytes = raw.data_bytes;
  return head;
}

StatusOr<Frame> ReadFrame(ByteStream* stream) {
  char header[kFrameHeaderBytes];
  PS_RETURN_IF_ERROR(stream->ReadFull(header, sizeof(header)));
  PS_ASSIGN_OR_RETURN(const FrameHeader head, ParseFrameHeader(header));
  Frame frame;
  frame.kind = head.kind;
  frame.meta.resize(head.meta_bytes);
  PS_RETURN_IF_ERROR(stream->ReadFull(frame.meta.data(), frame.meta.size()));
  frame.data_bytes = head.data_bytes;
  return frame;
}

Status ParseMeta(const Frame& frame, google::protobuf::MessageLite* message) {
  if (!message->ParseFromString(frame.meta)) {
    return InvalidArgument(std::string(FrameKindName(frame.kind)) + " frame: not a valid " +
                           message->GetTypeName());
  }
  return OkStatus();
}

void FrameBatch::Add(FrameKind kind, const google::protobuf::MessageLite* meta, const char* data,
                     uint64_t n) {
  std::string& head = heads_.emplace_back(kFrameHeaderBytes, '\0');
  if (meta != nullptr) meta->AppendToString(&head);
  const RawHeader raw = {kFrameMagic, static_cast<uint32_t>(kind),
                         static_cast<uint32_t>(head.size() - kFrameHeaderBytes), 0, n};
  std::memcpy(head.data(), &raw, sizeof(raw));
  iov_.push_back({head.data(), head.size()});
  if (n > 0) iov_.push_back({const_cast<char*>(data), n});
}

void FrameBatch::AddTensor(const std::string& name, const Tensor& tensor, proto::DataType wire) {
  ForEachChunkSpan(name, tensor, kChunkFrameBytes,
                   [&](const proto::TensorChunk& head, const char* data, size_t n) {
                     if (wire != proto::DT_BFLOAT16) {
                       Add(FrameKind::kChunk, &head, data, n);
                       return true;
                     }
                     // The same chunk at half the bytes, rounded into a
                     // buffer the batch keeps.
                     std::vector<uint16_t>& rounded = rounded_.emplace_back(n / sizeof(float));
                     ToBfloat16(reinterpret_cast<const float*>(data),
                                static_cast<int64_t>(rounded.size()), rounded.data());
                     proto::TensorChunk narrow = head;
                     narrow.mutable_meta()->set_dtype(proto::DT_BFLOAT16);
                     narrow.set_offset(head.offset() / 2);
                     narrow.set_total_bytes(head.total_bytes() / 2);
                     Add(FrameKind::kChunk, &narrow, reinterpret_cast<const char*>(rounded.data()),
                         n / 2);
                     return true;
                   });
}

Status ReadChunk(ByteStream* stream, const Frame& frame, TensorAssembler* assembler) {
  proto::TensorChunk head;
  PS_RETURN_IF_ERROR(ParseMeta(frame, &head));
  if (head.meta().dtype() != proto::DT_BFLOAT16) {
    PS_ASSIGN_OR_RETURN(char* dest, assembler->Place(head, frame.data_bytes));
    return stream->ReadFull(dest, frame.data_bytes);
  }
  // bfloat16 on the wire: the float32 chunk it stands for, checked by the
  // assembler before anything is allocated for it.
  const uint64_t limit = UINT64_MAX / 2;
  if (head.offset() % 2 || head.total_bytes() % 2 || frame.data_bytes % 2 ||
      head.offset() > limit || head.total_bytes() > limit || frame.data_bytes > limit) {
    return InvalidArgument("tensor " + head.name() + ": bfloat16 chunk of odd or absurd size");
  }
  proto::TensorChunk wide = head;
  wide.mutable_meta()->set_dtype(proto::DT_FLOAT);
  wide.set_offset(head.offset() * 2);
  wide.set_total_bytes(head.total_bytes() * 2);
  PS_ASSIGN_OR_RETURN(char* dest, assembler->Place(wide, frame.data_bytes * 2, proto::DT_BFLOAT16));
  std::vector<uint16_t> narrow(frame.data_bytes / 2);
  PS_RETURN_IF_ERROR(stream->ReadFull(narrow.data(), frame.data_bytes));
  FromBfloat16(narrow.data(), static_cast<int64_t>(narrow.size()), reinterpret_cast<float*>(dest));
  return OkStatus();
}

void FrameBatch::AddShmTensor(const std::string& name, const Tensor& tensor,
                              const SharedRegion& region, uint64_t offset) {
  CopyInHalves(region.data() + offset, tensor.data(), tensor.bytes());
  AddShmChunk(name, tensor, offset, /*in_arena=*/false);
}

void FrameBatch::AddArenaTensor(const std::string& name, const Tensor& tensor, uint64_t offset) {
  AddShmChunk(name, tensor, offset, /*in_arena=*/true);
}

void FrameBatch::AddShmChunk(const std::string& name, const Tensor& tensor, uint64_t offset,
                             bool in_arena) {
  proto::ShmChunk chunk;
  proto::TensorChunk* head = chunk.mutable_head();
  head->set_name(name);
  head->mutable_meta()->set_dtype(proto::DT_FLOAT);
  for (int64_t d : tensor.shape()) head->mutable_meta()->add_shape(d);
  head->set_offset(0);
  head->set_total_bytes(tensor.bytes());
  chunk.set_region_offset(offset);
  chunk.set_bytes(tensor.bytes());
  chunk.set_in_arena(in_arena);
  Add(FrameKind::kShmChunk, &chunk);
}

Status FrameBatch::WriteAndClear(ByteStream* stream) {
  const Status written = WriteTo(stream);
  heads_.clear();
  rounded_.clear();
  iov_.clear();
  return written;
}

StatusOr<uint64_t> ReadShmChunk(const Frame& frame, const SharedMemory& shared,
                                TensorAssembler* assembler, ShmRead how) {
  proto::ShmChunk chunk;
  PS_RETURN_IF_ERROR(ParseMeta(frame, &chunk));
  const std::string& name = chunk.head().name();
  const SharedRegion* region = chunk.in_arena() ? shared.arena : shared.region;
  const char* what = chunk.in_arena() ? "arena" : "shared region";
  if (region == nullptr) {
    return InvalidArgument("tensor " + name + ": a ShmChunk frame on a connection without " +
                           (chunk.in_arena() ? "an arena" : "a shared region"));
  }
  if (!region->Holds(chunk.region_offset(), chunk.bytes())) {
    return InvalidArgument("tensor " + name + ": bytes [" + std::to_string(chunk.region_offset()) +
                           ", +" + std::to_string(chunk.bytes()) + ") outside the " + what +
                           " of " + std::to_string(region->bytes()));
  }
  if (chunk.head().meta().dtype() != proto::DT_FLOAT) {
    return InvalidArgument("tensor " + name + ": a ShmChunk carries float32 only");
  }
  char* const src = region->data() + chunk.region_offset();
  if (how == ShmRead::kView) {
    if (chunk.region_offset() % alignof(float) != 0) {
      return InvalidArgument("tensor " + name + ": region offset " +
                             std::to_string(chunk.region_offset()) + " is not a float's");
    }
    PS_RETURN_IF_ERROR(
        assembler->PlaceView(chunk.head(), chunk.bytes(), reinterpret_cast<float*>(src)));
  } else {
    PS_ASSIGN_OR_RETURN(char* dest, assembler->Place(chunk.head(), chunk.bytes()));
    if (dest != src) CopyInHalves(dest, src, chunk.bytes());
  }
  return chunk.in_arena() ? 0 : chunk.bytes();
}

Status WriteFrame(ByteStream* stream, FrameKind kind, const google::protobuf::MessageLite* meta,
                  const char* data, uint64_t n) {
  FrameBatch batch;
  batch.Add(kind, meta, data, n);
  return batch.WriteTo(stream);
}

Status WriteError(ByteStream* stream, const Status& status) {
  proto::ChannelError error;
  error.set_code(static_cast<int>(status.code()));
  error.set_message(status.message());
  error.set_hint(static_cast<int>(status.hint()));
  return WriteFrame(stream, FrameKind::kError, &error);
}

Status ReadHello(ByteStream* stream) {
  PS_ASSIGN_OR_RETURN(Frame hello, ReadFrame(stream));
  if (hello.kind == FrameKind::kError) return ErrorOf(hello);
  if (hello.kind != FrameKind::kHello) {
    return DataLoss(std::string("tensor channel: a ") + FrameKindName(hello.kind) +
                    " frame where the ps's Hello was due");
  }
  return OkStatus();
}

Status ErrorOf(const Frame& frame) {
  proto::ChannelError error;
  PS_RETURN_IF_ERROR(ParseMeta(frame, &error));
  if (error.code() <= 0 || error.code() > static_cast<int>(Code::kDataLoss)) {
    return Status(Code::kUnknown, error.message());
  }
  // A hint this side does not know is no hint: the code decides.
  const Hint hint = error.hint() == static_cast<int>(Hint::kNotSent)  ? Hint::kNotSent
                    : error.hint() == static_cast<int>(Hint::kUnread) ? Hint::kUnread
                                                                      : Hint::kNone;
  return Status(static_cast<Code>(error.code()), error.message(), hint);
}

}  // namespace tcp
}  // namespace pstrain
