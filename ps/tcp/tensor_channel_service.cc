#include "ps/tcp/tensor_channel_service.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "core/halves.h"
#include "core/unique_fd.h"
#include "proto/ps.pb.h"
#include "ps/tcp/request_reader.h"
#include "ps/tensor_streams.h"

namespace pstrain {
namespace tcp {

namespace {

// A push's frames after its header, as NextPart (ps/tensor_streams.h).
class PushFrames {
 public:
  PushFrames(ByteStream* stream, proto::PushHeader header, SharedMemory shared,
             const FrameTimeouts& timeouts)
      : stream_(stream), header_(std::move(header)), shared_(shared), timeouts_(timeouts) {}

  StatusOr<StreamPart> Next(proto::PushHeader* header, TensorAssembler* assembler) {
    if (!header_read_) {
      header_read_ = true;
      *header = header_;
      return StreamPart::kHeader;
    }
    PS_ASSIGN_OR_RETURN(Frame frame, ReadFrameWithin(stream_, timeouts_));
    switch (frame.kind) {
      case FrameKind::kEnd:
        return StreamPart::kEnd;
      case FrameKind::kPushHeader:
        PS_RETURN_IF_ERROR(ParseMeta(frame, header));
        return StreamPart::kHeader;
      case FrameKind::kChunk:
        if (assembler != nullptr) PS_RETURN_IF_ERROR(ReadChunk(stream_, frame, assembler));
        return StreamPart::kChunk;
      case FrameKind::kShmChunk:
        if (assembler != nullptr) {
          // Applied or taken over (PsCore::Push) before the reply: until
          // then the client leaves the region alone.
          PS_RETURN_IF_ERROR(ReadShmChunk(frame, shared_, assembler, ShmRead::kView).status());
        }
        return StreamPart::kChunk;
      default:
        return InvalidArgument(std::string("a ") + FrameKindName(frame.kind) +
                               " frame inside a push");
    }
  }

 private:
  ByteStream* const stream_;
  const proto::PushHeader header_;
  const SharedMemory shared_;
  const FrameTimeouts& timeouts_;
  bool header_read_ = false;
};

Status ServePush(PsCore* core, ByteStream* stream, const Frame& first, SharedMemory shared,
                 const FrameTimeouts& timeouts) {
  proto::PushHeader header;
  PS_RETURN_IF_ERROR(ParseMeta(first, &header).Annotate("Push"));
  PushFrames frames(stream, std::move(header), shared, timeouts);
  ClientMemory arena;
  if (shared.arena != nullptr) arena = {shared.arena->data(), shared.arena->bytes()};
  auto pushed = HandlePushStream(
      core, [&frames](proto::PushHeader* h, TensorAssembler* a) { return frames.Next(h, a); },
      arena);
  if (!pushed.ok()) return pushed.status();
  stream->SetDeadline(timeouts.DeadlineFor(0));
  return WriteFrame(stream, FrameKind::kPushReply, &*pushed);
}

// The dtype a pull's tensors travel in: float32 unless it asks otherwise.
proto::DataType WireOf(const proto::PullRequest& request) {
  return request.wire_dtype() == proto::DT_INVALID ? proto::DT_FLOAT : request.wire_dtype();
}

// The PullRequest a frame carries, checked for what the channel itself
// decides (the wire's dtype).
StatusOr<proto::PullRequest> ParsePull(const Frame& first) {
  proto::PullRequest request;
  PS_RETURN_IF_ERROR(ParseMeta(first, &request).Annotate("Pull"));
  const proto::DataType wire = WireOf(request);
  if (wire != proto::DT_FLOAT && wire != proto::DT_BFLOAT16) {
    return InvalidArgument("Pull: wire_dtype " + std::to_string(wire) +
                           " (DT_FLOAT or DT_BFLOAT16)");
  }
  return request;
}

// Answers a pull: waits on this thread for its step if it has to, then
// writes the reply.
Status AnswerPull(PsCore* core, ByteStream* stream, const proto::PullRequest& request,
                  SharedMemory shared, const FrameTimeouts& timeouts,
                  const std::function<bool()>& cancelled) {
  const proto::DataType wire = WireOf(request);
  // No deadline of its own: the request states how long it waits. The wait
  // ends with its client, whose slot is then free at once.
  auto pulled = core->Pull(request, std::chrono::system_clock::time_point::max(),
                           [&] { return cancelled() || stream->PeerGone(); });
  if (!pulled.ok()) return pulled.status().Annotate("Pull");
  uint64_t reply_bytes = 0;
  for (const auto& named : pulled->tensors) reply_bytes += named.second->bytes();
  stream->SetDeadline(timeouts.DeadlineFor(reply_bytes));
  proto::PullResponse reply;
  reply.set_global_step(pulled->step);
  FrameBatch batch;
  batch.Add(FrameKind::kPullReply, &reply);
  // Each tensor straight from the variable's value (or rounded to
  // bfloat16), or copied into the shared region where it fits.
  const SharedRegion* const region = shared.region;
  const bool in_region =
      request.reply_in_shared_memory() && region != nullptr && wire == proto::DT_FLOAT;
  // The client copies tensors out as their frames come while the next are
  // copied in; small ones go together, each write waking the client.
  constexpr uint64_t kFlushBytes = uint64_t{1} << 20;
  uint64_t offset = 0, unsent = 0;
  for (const auto& [name, tensor] : pulled->tensors) {
    // Straight to where the client keeps it, when it says where.
    const auto room = request.arena_rooms().find(name);
    if (room != request.arena_rooms().end() && shared.arena != nullptr && wire == proto::DT_FLOAT &&
        tensor->bytes() > 0 && room->second.bytes() == tensor->bytes() &&
        shared.arena->Holds(room->second.offset(), tensor->bytes())) {
      const uint64_t at = room->second.offset();
      CopyInHalves(shared.arena->data() + at, tensor->data(), tensor->bytes());
      batch.AddArenaTensor(name, *tensor, at);
      unsent += tensor->bytes();
    } else if (in_region && tensor->bytes() > 0 && region->Holds(offset, tensor->bytes())) {
      batch.AddShmTensor(name, *tensor, *region, offset);
      offset += tensor->bytes();
      unsent += tensor->bytes();
    } else {
      batch.AddTensor(name, *tensor, wire);
    }
    if (unsent >= kFlushBytes) {
      PS_RETURN_IF_ERROR(batch.WriteAndClear(stream));
      unsent = 0;
    }
  }
  batch.Add(FrameKind::kEnd, nullptr);
  return batch.WriteTo(stream);
}

// Maps the region or the arena a client offers (replacing the one before)
// from the descriptor that came beside the frame, or says why not; a
// refusal leaves the connection as it was.
Status ServeShmAttach(ByteStream* stream, const Frame& first, ChannelConnection* connection) {
  const bool arena = first.kind == FrameKind::kShmAttachArena;
  const bool shared_memory = connection->shared_memory;
  UniqueFd fd(stream->TakeDescriptor());
  proto::ShmAttach attach;
  PS_RETURN_IF_ERROR(ParseMeta(first, &attach).Annotate(FrameKindName(first.kind)));
  proto::ShmAttachReply reply;
  if (!shared_memory) {
    reply.set_why("shared memory travels only on the ps's local socket, and never over TLS");
  } else if (!fd.valid()) {
    reply.set_why("no descriptor came with the offer");
  } else {
    auto adopted = SharedRegion::Adopt(std::move(fd), attach.bytes(),
                                       arena ? "the client's arena" : "the client's region");
    Status kept = adopted.status();
    if (kept.ok()) {
      kept = connection->Keep(std::move(adopted).value(),
                              arena ? &connection->arena : &connection->region);
    }
    if (kept.ok()) {
      reply.set_attached(true);
    } else {
      LOG_EVERY_N(WARNING, 100) << "tensor channel: refused shared memory: " << kept.message();
      reply.set_why(kept.ToString());
    }
  }
  return WriteFrame(stream, FrameKind::kShmAttachReply, &reply);
}

}  // namespace

ChannelConnection::~ChannelConnection() { Release(); }

Status ChannelConnection::Keep(std::unique_ptr<SharedRegion> mapped,
                               std::unique_ptr<SharedRegion>* slot) {
  if (budget != nullptr) {
    const uint64_t old_bytes = *slot != nullptr ? (*slot)->bytes() : 0;
    const uint64_t new_bytes = mapped != nullptr ? mapped->bytes() : 0;
    // The new region counted before the old one goes: a refusal leaves the
    // slot as it was. (Two offers at once may refuse each other; neither
    // takes the ps past its budget.)
    if (budget->used.fetch_add(new_bytes) + new_bytes - old_bytes > budget->limit) {
      budget->used -= new_bytes;
      return ResourceExhausted(
          "shared memory of " + std::to_string(new_bytes) + " bytes would take the ps past the " +
          std::to_string(budget->limit) + " bytes its clients may have it map");
    }
    budget->used -= old_bytes;
  }
  *slot = std::move(mapped);
  return OkStatus();
}

std::chrono::steady_clock::time_point FrameTimeouts::DeadlineFor(
    uint64_t bytes, std::chrono::steady_clock::time_point begun) const {
  // A frame announcing more than any could carry is refused once read; its
  // deadline only must not overflow.
  bytes = std::min<uint64_t>(bytes, uint64_t{1} << 44);
  const auto data = std::chrono::duration<double>(static_cast<double>(bytes) / kMinBytesPerSecond);
  return begun + frame + std::chrono::duration_cast<std::chrono::milliseconds>(data);
}

StatusOr<Frame> ReadFrameWithin(ByteStream* stream, const FrameTimeouts& timeouts) {
  PS_RETURN_IF_ERROR(stream->AwaitData(std::chrono::steady_clock::now() + timeouts.idle));
  const auto begun = std::chrono::steady_clock::now();
  stream->SetDeadline(begun + timeouts.frame);
  PS_ASSIGN_OR_RETURN(Frame frame, ReadFrame(stream));
  // The data that follows (a chunk's) has its own share of time.
  stream->SetDeadline(timeouts.DeadlineFor(frame.data_bytes, begun));
  return frame;
}

namespace {

// A request's end: its error, if any, goes back to the client; the stream
// has no deadline again.
Status Answered(ByteStream* stream, const FrameTimeouts& timeouts, const Status& served) {
  if (!served.ok()) {
    // The connection closes either way; the error goes out if it can.
    stream->SetDeadline(timeouts.DeadlineFor(0));
    (void)WriteError(stream, served);
  }
  stream->SetDeadline(std::chrono::steady_clock::time_point::max());
  return served;
}

}  // namespace

Status ServeTensorRequest(PsCore* core, ByteStream* stream, ChannelConnection* connection,
                          const FrameTimeouts& timeouts, const std::function<bool()>& cancelled,
                          const ParkPull& park) {
  const SharedMemory shared{connection->region.get(), connection->arena.get()};
  auto frame = ReadFrameWithin(stream, timeouts);
  // The client hung up between requests: a clean end.
  if (!frame.ok() && frame.status().code() == Code::kUnavailable) return frame.status();
  Status served = frame.status();
  if (served.ok()) {
    switch (frame->kind) {
      case FrameKind::kPushHeader:
        served = ServePush(core, stream, *frame, shared, timeouts);
        break;
      case FrameKind::kPullRequest: {
        auto request = ParsePull(*frame);
        served = request.status();
        if (!served.ok()) break;
        if (park) {
          auto parked = park(*request);
          served = parked.status().Annotate("Pull");
          if (!served.ok() || *parked) break;
        }
        served = AnswerPull(core, stream, *request, shared, timeouts, cancelled);
        break;
      }
      case FrameKind::kShmAttach:
      case FrameKind::kShmAttachArena:
        served = ServeShmAttach(stream, *frame, connection);
        break;
      default:
        served = InvalidArgument(std::string("a request cannot start with a ") +
                                 FrameKindName(frame->kind) + " frame");
    }
  }
  return Answered(stream, timeouts, served);
}

Status ServeParkedPull(PsCore* core, ByteStream* stream, ChannelConnection* connection,
                       const FrameTimeouts& timeouts, const proto::PullRequest& request,
                       const Status& waited, const std::function<bool()>& cancelled) {
  const SharedMemory shared{connection->region.get(), connection->arena.get()};
  return Answered(
      stream, timeouts,
      waited.ok() ? AnswerPull(core, stream, request, shared, timeouts, cancelled) : waited);
}

Status ServeTensorConnection(PsCore* core, ByteStream* stream,
                             const std::function<bool()>& cancelled, bool shared_memory) {
  ChannelConnection connection;
  connection.shared_memory = shared_memory;
  const FrameTimeouts timeouts;
  RequestReader reader;
  for (;;) {
    StatusOr<RequestReader::Gathered> gathered = RequestReader::Gathered::kPartial;
    while (gathered.ok() && *gathered != RequestReader::Gathered::kReady) {
      const Status more = stream->AwaitData(std::chrono::steady_clock::now() + timeouts.idle);
      gathered = more.ok() ? reader.Gather(stream, RequestReader::kDefaultCap) : more;
    }
    if (!gathered.ok() && !reader.pending()) return OkStatus();  // the stream ended
    RequestReader::Stream request(&reader, stream);
    const Status served = ServeTensorRequest(core, &request, &connection, timeouts, cancelled);
    if (served.code() == Code::kUnavailable) return OkStatus();
    PS_RETURN_IF_ERROR(served);
    reader.Served();
  }
}

}  // namespace tcp
}  // namespace pstrain
