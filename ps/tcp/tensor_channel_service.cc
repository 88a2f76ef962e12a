#include "ps/tcp/tensor_channel_service.h"

#include <glog/logging.h>

#include <chrono>
#include <utility>

#include "core/halves.h"
#include "proto/ps.pb.h"
#include "ps/tensor_streams.h"

namespace pstrain {
namespace tcp {

namespace {

// A push's frames after its header, as NextPart (ps/tensor_streams.h).
class PushFrames {
 public:
  PushFrames(ByteStream* stream, proto::PushHeader header, SharedMemory shared)
      : stream_(stream), header_(std::move(header)), shared_(shared) {}

  StatusOr<StreamPart> Next(proto::PushHeader* header, TensorAssembler* assembler) {
    if (!header_read_) {
      header_read_ = true;
      *header = header_;
      return StreamPart::kHeader;
    }
    PS_ASSIGN_OR_RETURN(Frame frame, ReadFrame(stream_));
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
  bool header_read_ = false;
};

Status ServePush(PsCore* core, ByteStream* stream, const Frame& first, SharedMemory shared) {
  proto::PushHeader header;
  PS_RETURN_IF_ERROR(ParseMeta(first, &header).Annotate("Push"));
  PushFrames frames(stream, std::move(header), shared);
  auto pushed = HandlePushStream(core, [&frames](proto::PushHeader* h, TensorAssembler* a) {
    return frames.Next(h, a);
  });
  if (!pushed.ok()) return pushed.status();
  return WriteFrame(stream, FrameKind::kPushReply, &*pushed);
}

Status ServePull(PsCore* core, ByteStream* stream, const Frame& first, SharedMemory shared,
                 const std::function<bool()>& stopping) {
  proto::PullRequest request;
  PS_RETURN_IF_ERROR(ParseMeta(first, &request).Annotate("Pull"));
  const proto::DataType wire =
      request.wire_dtype() == proto::DT_INVALID ? proto::DT_FLOAT : request.wire_dtype();
  if (wire != proto::DT_FLOAT && wire != proto::DT_BFLOAT16) {
    return InvalidArgument("Pull: wire_dtype " + std::to_string(wire) +
                           " (DT_FLOAT or DT_BFLOAT16)");
  }
  // No deadline of its own: the core bounds every wait.
  auto pulled = core->Pull(request, std::chrono::system_clock::time_point::max(), stopping);
  if (!pulled.ok()) return pulled.status().Annotate("Pull");
  proto::PullResponse reply;
  reply.set_global_step(pulled->step);
  FrameBatch batch;
  batch.Add(FrameKind::kPullReply, &reply);
  // Each tensor straight from the variable's value (or rounded to
  // bfloat16), or copied into the shared region where it fits.
  const SharedRegion* const region = shared.region;
  const bool in_region = request.reply_in_shared_memory() && region != nullptr &&
                         wire == proto::DT_FLOAT;
  // The client copies tensors out as their frames come while the next are
  // copied in; small ones go together, each write waking the client.
  constexpr uint64_t kFlushBytes = uint64_t{1} << 20;
  uint64_t offset = 0, unsent = 0;
  for (const auto& [name, tensor] : pulled->tensors) {
    // Straight to where the client keeps it, when it says where.
    const auto room = request.arena_rooms().find(name);
    if (room != request.arena_rooms().end() && shared.arena != nullptr &&
        wire == proto::DT_FLOAT && tensor->bytes() > 0 &&
        room->second.bytes() == tensor->bytes() &&
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

// Maps the region or the arena a client offers (replacing the one before),
// or says why not; a refusal leaves the connection as it was.
Status ServeShmAttach(ByteStream* stream, const Frame& first,
                      std::unique_ptr<SharedRegion>* mapped) {
  proto::ShmAttach attach;
  PS_RETURN_IF_ERROR(ParseMeta(first, &attach).Annotate(FrameKindName(first.kind)));
  proto::ShmAttachReply reply;
  auto opened = SharedRegion::Open(attach.name(), attach.bytes());
  if (opened.ok()) {
    *mapped = std::move(opened).value();
    reply.set_attached(true);
  } else {
    reply.set_why(opened.status().ToString());
  }
  return WriteFrame(stream, FrameKind::kShmAttachReply, &reply);
}

// Answers an offer of shared memory with "no" (over TLS).
Status RefuseShmAttach(ByteStream* stream) {
  proto::ShmAttachReply reply;
  reply.set_why("shared memory is off over TLS");
  return WriteFrame(stream, FrameKind::kShmAttachReply, &reply);
}

}  // namespace

Status ServeTensorConnection(PsCore* core, ByteStream* stream,
                             const std::function<bool()>& stopping, bool shared_memory) {
  // Offered by the client; none at first.
  std::unique_ptr<SharedRegion> region, arena;
  for (;;) {
    const SharedMemory shared{region.get(), arena.get()};
    auto frame = ReadFrame(stream);
    // The client hung up between requests: a clean end.
    if (!frame.ok() && frame.status().code() == Code::kUnavailable) return OkStatus();
    Status served = frame.status();
    if (served.ok()) {
      switch (frame->kind) {
        case FrameKind::kPushHeader:
          served = ServePush(core, stream, *frame, shared);
          break;
        case FrameKind::kPullRequest:
          served = ServePull(core, stream, *frame, shared, stopping);
          break;
        case FrameKind::kShmAttach:
          served = shared_memory ? ServeShmAttach(stream, *frame, &region)
                                 : RefuseShmAttach(stream);
          break;
        case FrameKind::kShmAttachArena:
          served = shared_memory ? ServeShmAttach(stream, *frame, &arena)
                                 : RefuseShmAttach(stream);
          break;
        default:
          served = InvalidArgument(std::string("a request cannot start with a ") +
                                   FrameKindName(frame->kind) + " frame");
      }
    }
    if (!served.ok()) {
      (void)WriteError(stream, served);  // the connection closes either way
      return served;
    }
  }
}

StatusOr<std::unique_ptr<TensorChannelServer>> TensorChannelServer::Start(
    PsCore* core, const std::string& host, int port, int max_connections,
    std::shared_ptr<SSL_CTX> tls) {
  PS_ASSIGN_OR_RETURN(auto listener, Listener::Listen(host, port));
  std::unique_ptr<TensorChannelServer> server(
      new TensorChannelServer(core, std::move(listener), max_connections, std::move(tls)));
  server->acceptor_ = std::thread([s = server.get()] { s->AcceptLoop(); });
  return server;
}

TensorChannelServer::~TensorChannelServer() { Stop(); }

void TensorChannelServer::AcceptLoop() {
  while (!stopping_) {
    auto socket = listener_->Accept();
    if (!socket.ok()) {
      if (stopping_) return;
      // Out of descriptors, say: try again in a moment rather than spin.
      LOG(WARNING) << socket.status().ToString();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    ReapLocked();
    if (static_cast<int>(connections_.size()) >= max_connections_) {
      (void)WriteError(socket->get(), ResourceExhausted("tensor channel: " +
                                                        std::to_string(max_connections_) +
                                                        " connections already"));
      continue;
    }
    Connection& c = connections_.emplace_back();
    c.socket = std::move(socket).value();
    c.thread = std::thread([this, &c] {
      Status s = Serve(c.socket.get());
      if (!s.ok() && !stopping_) VLOG(1) << "tensor channel connection closed: " << s.ToString();
      c.socket->Shutdown();  // the peer hears the end now; the fd goes when reaped
      c.done = true;
    });
  }
}

Status TensorChannelServer::Serve(Socket* socket) {
  const auto stopping = [this] { return stopping_.load(); };
  if (tls_ == nullptr) return ServeTensorConnection(core_, socket, stopping);
  // A peer gets 10 s to complete the handshake; then requests wait as long
  // as they need (the core bounds every wait).
  socket->SetTimeout(std::chrono::seconds(10));
  auto tls = TlsStream::Accept(tls_.get(), socket);
  if (!tls.ok()) {
    if (!stopping_) {
      LOG(WARNING) << "tensor channel: refused a connection from " << socket->PeerAddress() << ": "
                   << tls.status().message();
    }
    return tls.status();
  }
  socket->SetTimeout(std::chrono::milliseconds(0));
  VLOG(1) << "tensor channel: a TLS connection from " << (*tls)->peer();
  return ServeTensorConnection(core_, tls->get(), stopping, /*shared_memory=*/false);
}

void TensorChannelServer::ReapLocked() {
  for (auto it = connections_.begin(); it != connections_.end();) {
    if (!it->done) {
      ++it;
      continue;
    }
    it->thread.join();
    it = connections_.erase(it);
  }
}

void TensorChannelServer::Stop() {
  if (stopping_.exchange(true)) return;
  listener_->Shutdown();
  acceptor_.join();
  std::lock_guard<std::mutex> lock(mu_);
  for (Connection& c : connections_) c.socket->Shutdown();
  for (Connection& c : connections_) c.thread.join();
  connections_.clear();
}

}  // namespace tcp
}  // namespace pstrain
