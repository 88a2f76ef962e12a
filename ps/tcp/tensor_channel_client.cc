#include "ps/tcp/tensor_channel_client.h"

#include <glog/logging.h>

#include <algorithm>
#include <utility>

#include "core/status_action.h"
#include "ps/tensor_chunks.h"

namespace pstrain {
namespace tcp {

namespace {

// The channel could not be used at all: the request goes another way.
Status Unreachable(const std::string& why) {
  return Unavailable("tensor channel unreachable: " + why).WithHint(Hint::kNotSent);
}

}  // namespace

StatusOr<std::unique_ptr<TensorChannelClient::Connection>> TensorChannelClient::Connect(
    std::chrono::milliseconds timeout) {
  // A ps that drops what it is sent (a firewall) is given up on soon: the
  // caller can go another way.
  timeout = std::min<std::chrono::milliseconds>(timeout, std::chrono::seconds(10));
  auto c = std::make_unique<Connection>();
  if (local()) {
    auto local = Socket::ConnectLocal(local_socket_, timeout);
    if (local.ok()) {
      c->socket = std::move(local).value();
    } else if (local.status().code() == Code::kNotFound) {
      // Another network namespace (a container) has no such name.
      LOG(INFO) << "tensor channel to " << host_ << ":" << port_
                << ": the ps's local socket is not reachable from here ("
                << local.status().message() << "); tensors go over TCP, without shared memory";
      local_unreachable_ = true;
    } else {
      return Unreachable(local.status().message());  // busy: another way now
    }
  }
  if (c->socket == nullptr) {
    auto socket = Socket::Connect(host_, port_, timeout);
    if (!socket.ok()) return Unreachable(socket.status().message());
    c->socket = std::move(socket).value();
  }
  c->socket->SetTimeout(timeout);
  if (tls_ != nullptr) {
    auto tls = TlsStream::Connect(tls_.get(), c->socket.get(), host_);
    // A ps refusing the connection closes it in the handshake; one whose
    // certificate does not pass is refused over gRPC just the same.
    if (!tls.ok()) return Unreachable(tls.status().message());
    c->tls = std::move(tls).value();
  }
  // The ps's greeting, or its refusal, before any request goes out.
  const Status hello = ReadHello(c->stream());
  if (hello.code() == Code::kUnavailable || hello.code() == Code::kDeadlineExceeded) {
    return Unreachable(hello.message());  // closed, or silent
  }
  PS_RETURN_IF_ERROR(hello);
  return c;
}

StatusOr<std::unique_ptr<TensorChannelClient::Connection>> TensorChannelClient::Take(
    std::chrono::milliseconds timeout) {
  std::unique_ptr<Connection> c;
  std::shared_ptr<const SharedRegion> arena;
  {
    MutexLock lock(&mu_);
    // An idle connection the ps has closed meanwhile (its idle limit, or
    // room for others) is dropped rather than failing the call.
    while (c == nullptr && !idle_.empty()) {
      c = std::move(idle_.back());
      idle_.pop_back();
      if (c->socket->PeerGone() || (c->tls == nullptr && c->socket->ReadableNow())) c.reset();
    }
    arena = arena_;
  }
  if (c == nullptr) {
    PS_ASSIGN_OR_RETURN(c, Connect(timeout));
  }
  c->socket->SetTimeout(timeout);
  c->placed = 0;
  if (!c->socket->local()) return c;  // shared memory travels on the local socket only
  if (!refused_) PS_RETURN_IF_ERROR(ShareMemory(c.get()));
  if (arena != nullptr && c->arena != arena && !arena_refused_) {
    const Status attached = AttachArena(c.get(), std::move(arena));
    // A ps from before the arena refused the frame and closed the
    // connection: again on a new one, without the arena.
    if (!attached.ok()) return arena_refused_ ? Take(timeout) : attached;
  }
  return c;
}

void TensorChannelClient::UseArena(std::shared_ptr<const SharedRegion> arena) {
  MutexLock lock(&mu_);
  arena_ = std::move(arena);
}

bool TensorChannelClient::InArena(const Connection& c, const Tensor& t, uint64_t* offset) {
  if (c.arena == nullptr || t.bytes() == 0 || t.device() != nullptr) return false;
  const char* p = reinterpret_cast<const char*>(t.data());
  if (p < c.arena->data() || p >= c.arena->data() + c.arena->bytes()) return false;
  *offset = static_cast<uint64_t>(p - c.arena->data());
  return c.arena->Holds(*offset, t.bytes());
}

Status TensorChannelClient::AttachArena(Connection* c, std::shared_ptr<const SharedRegion> arena) {
  auto replied = Attach(c, FrameKind::kShmAttachArena, *arena);
  if (replied.status().code() == Code::kInvalidArgument) {
    LOG(INFO) << "tensor channel to " << host_ << ":" << port_ << ": the ps does not know arenas ("
              << replied.status().ToString() << "); tensors go through the connection's region";
    arena_refused_ = true;
  }
  PS_ASSIGN_OR_RETURN(proto::ShmAttachReply reply, std::move(replied));
  if (!reply.attached()) {
    LOG(INFO) << "tensor channel to " << host_ << ":" << port_
              << ": the ps could not map this task's arena (" << reply.why()
              << "); tensors go through the connection's region";
    arena_refused_ = true;
    return OkStatus();
  }
  c->arena = std::move(arena);
  return OkStatus();
}

StatusOr<proto::ShmAttachReply> TensorChannelClient::Attach(Connection* c, FrameKind kind,
                                                            const SharedRegion& region) {
  proto::ShmAttach attach;
  attach.set_bytes(region.bytes());
  FrameBatch frame;
  frame.Add(kind, &attach);
  const Status sent = frame.WriteTo(c->stream(), region.fd());
  if (!sent.ok()) return RefusalOr(c->stream(), sent);
  proto::ShmAttachReply reply;
  PS_RETURN_IF_ERROR(ReadReply(c->stream(), FrameKind::kShmAttachReply, "ShmAttach", &reply));
  return reply;
}

Status TensorChannelClient::ReadReply(ByteStream* stream, FrameKind kind, const char* to_what,
                                      google::protobuf::MessageLite* reply) {
  PS_ASSIGN_OR_RETURN(Frame frame, ReadFrame(stream));
  if (frame.kind == FrameKind::kError) return ErrorOf(frame);
  if (frame.kind != kind) {
    return DataLoss(std::string("tensor channel: a ") + FrameKindName(frame.kind) +
                    " frame in reply to " + to_what);
  }
  return ParseMeta(frame, reply);
}

void TensorChannelClient::GiveBack(std::unique_ptr<Connection> c) {
  MutexLock lock(&mu_);
  idle_.push_back(std::move(c));
}

Status TensorChannelClient::ShareMemory(Connection* c) {
  const uint64_t wanted = std::min<uint64_t>(wanted_, region_cap_);
  if (c->region != nullptr && c->region->bytes() >= wanted) return OkStatus();
  constexpr uint64_t kMiB = 1 << 20;
  auto region = SharedRegion::Create((wanted + kMiB - 1) / kMiB * kMiB);
  if (!region.ok()) {
    // No more memory, say: regions stay as large as they are
    // (what does not fit goes on the socket), or there are none.
    const uint64_t cap = c->region != nullptr ? c->region->bytes() : 0;
    LOG(WARNING) << "tensor channel to " << host_ << ":" << port_ << ": "
                 << region.status().ToString()
                 << (cap > 0 ? "; shared regions stay at " + std::to_string(cap) + " bytes"
                             : "; going without shared memory");
    region_cap_ = cap;
    if (cap == 0) refused_ = true;
    return OkStatus();
  }
  PS_ASSIGN_OR_RETURN(proto::ShmAttachReply reply, Attach(c, FrameKind::kShmAttach, **region));
  if (!reply.attached()) {
    LOG(INFO) << "tensor channel to " << host_ << ":" << port_
              << " goes without shared memory: the ps could not map it (" << reply.why() << ")";
    refused_ = true;
    return OkStatus();
  }
  c->region = std::move(region).value();
  shared_ = true;
  return OkStatus();
}

void TensorChannelClient::AddTensor(Connection* c, FrameBatch* frames, const std::string& name,
                                    const Tensor& tensor, proto::DataType wire) {
  uint64_t at = 0;
  if (wire == proto::DT_FLOAT && InArena(*c, tensor, &at)) {
    frames->AddArenaTensor(name, tensor, at);  // the ps reads it where it lies
    return;
  }
  if (c->region != nullptr && wire == proto::DT_FLOAT && tensor.bytes() > 0 &&
      c->region->Holds(c->placed, tensor.bytes())) {
    frames->AddShmTensor(name, tensor, *c->region, c->placed);
    c->placed += tensor.bytes();
    return;
  }
  if (wire == proto::DT_FLOAT) c->placed += tensor.bytes();  // counted for the next region
  frames->AddTensor(name, tensor, wire);
}

void TensorChannelClient::Want(uint64_t bytes) {
  uint64_t now = wanted_;
  while (bytes > now && !wanted_.compare_exchange_weak(now, bytes)) {
  }
}

Status TensorChannelClient::RefusalOr(ByteStream* stream, const Status& sent) {
  auto reply = ReadFrame(stream);
  if (reply.ok() && reply->kind == FrameKind::kError) return ErrorOf(*reply);
  return sent;
}

StatusOr<proto::PushResponse> TensorChannelClient::Push(const proto::PushHeader& header,
                                                        const NamedTensors& grads,
                                                        proto::DataType wire,
                                                        std::chrono::milliseconds timeout,
                                                        const std::map<std::string, Tensor>* into) {
  auto pushed = PushOnce(header, grads, wire, timeout, into);
  // The ps closed the idle connection as the push went out, reading none
  // of it: once more, on a new one.
  if (!pushed.ok() && ActionFor(pushed.status()) == Action::kResend) {
    pushed = PushOnce(header, grads, wire, timeout, into);
  }
  return pushed;
}

StatusOr<proto::PushResponse> TensorChannelClient::PushOnce(
    const proto::PushHeader& header, const NamedTensors& grads, proto::DataType wire,
    std::chrono::milliseconds timeout, const std::map<std::string, Tensor>* into) {
  PS_ASSIGN_OR_RETURN(auto c, Take(timeout));
  proto::PushHeader asked = header;
  // The values after the push, written by the ps where this task keeps
  // them: all of them, or none asked (then the caller pulls). Float32
  // only, as a pull writes into the arena: a pull in bfloat16 gives
  // rounded values.
  if (into != nullptr && wire == proto::DT_FLOAT) {
    for (const auto& [name, tensor] : *into) {
      if (tensor.bytes() == 0) continue;  // nothing to write
      uint64_t at = 0;
      if (!InArena(*c, tensor, &at)) {
        asked.clear_arena_rooms();
        break;
      }
      proto::ArenaRoom& room = (*asked.mutable_arena_rooms())[name];
      room.set_offset(at);
      room.set_bytes(tensor.bytes());
    }
  }
  FrameBatch push;
  push.Add(FrameKind::kPushHeader, &asked);
  // One write for the whole push: the ps reads a gradient in shared memory
  // where it lies, and only once every one has come.
  for (const auto& [name, tensor] : grads) AddTensor(c.get(), &push, name, *tensor, wire);
  push.Add(FrameKind::kEnd, nullptr);
  const Status sent = push.WriteTo(c->stream());
  if (!sent.ok()) return RefusalOr(c->stream(), sent);
  return FinishPush(std::move(c));
}

StatusOr<proto::PushResponse> TensorChannelClient::FinishPush(std::unique_ptr<Connection> c) {
  Want(c->placed);
  proto::PushResponse response;
  PS_RETURN_IF_ERROR(ReadReply(c->stream(), FrameKind::kPushReply, "a push", &response));
  GiveBack(std::move(c));
  return response;
}

// Frames go out as they are written: the header at once, each tensor's
// chunks from its own memory (or through the shared region), the End frame
// at Finish. A stream destroyed before Finish closes its connection
// mid-push, which the ps drops whole.
class TensorChannelClient::Pushing : public PushStream {
 public:
  Pushing(TensorChannelClient* client, std::unique_ptr<Connection> c, proto::DataType wire)
      : client_(client), c_(std::move(c)), wire_(wire) {}

  Status Write(const std::string& name, const Tensor& tensor) override {
    PS_RETURN_IF_ERROR(failed_);
    FrameBatch frames;
    client_->AddTensor(c_.get(), &frames, name, tensor, wire_);
    const Status sent = frames.WriteTo(c_->stream());
    if (!sent.ok()) failed_ = RefusalOr(c_->stream(), sent);
    return failed_;
  }

  StatusOr<proto::PushResponse> Finish() override {
    PS_RETURN_IF_ERROR(failed_);
    const Status sent = WriteFrame(c_->stream(), FrameKind::kEnd, nullptr);
    if (!sent.ok()) return RefusalOr(c_->stream(), sent);
    return client_->FinishPush(std::move(c_));
  }

 private:
  TensorChannelClient* const client_;
  std::unique_ptr<Connection> c_;
  const proto::DataType wire_;
  Status failed_;  // the first failed Write's, after which nothing is sent
};

StatusOr<std::unique_ptr<PushStream>> TensorChannelClient::StartPush(
    const proto::PushHeader& header, proto::DataType wire, std::chrono::milliseconds timeout) {
  PS_ASSIGN_OR_RETURN(auto c, Take(timeout));
  const Status sent = WriteFrame(c->stream(), FrameKind::kPushHeader, &header);
  if (!sent.ok()) return RefusalOr(c->stream(), sent);
  return std::unique_ptr<PushStream>(new Pushing(this, std::move(c), wire));
}

Status TensorChannelClient::Pull(const proto::PullRequest& request,
                                 std::map<std::string, Tensor>* out, int64_t* step,
                                 std::chrono::milliseconds timeout) {
  const Status pulled = PullOnce(request, out, step, timeout);
  // As Push: the ps read none of it.
  if (ActionFor(pulled) == Action::kResend) return PullOnce(request, out, step, timeout);
  return pulled;
}

Status TensorChannelClient::PullOnce(const proto::PullRequest& request,
                                     std::map<std::string, Tensor>* out, int64_t* step,
                                     std::chrono::milliseconds timeout) {
  PS_ASSIGN_OR_RETURN(auto c, Take(timeout));
  proto::PullRequest asked = request;
  asked.set_reply_in_shared_memory(c->region != nullptr);
  // Values for tensors kept in the arena are written there by the ps.
  if (request.wire_dtype() != proto::DT_BFLOAT16) {
    for (const auto& [name, tensor] : *out) {
      uint64_t at = 0;
      if (!InArena(*c, tensor, &at)) continue;
      proto::ArenaRoom& room = (*asked.mutable_arena_rooms())[name];
      room.set_offset(at);
      room.set_bytes(tensor.bytes());
    }
  }
  Status sent = WriteFrame(c->stream(), FrameKind::kPullRequest, &asked);
  if (!sent.ok()) return RefusalOr(c->stream(), sent);
  TensorAssembler assembler;
  assembler.Reuse(out);
  bool replied = false;
  uint64_t received = 0;  // bytes of float32 values, for the next region's size
  for (;;) {
    PS_ASSIGN_OR_RETURN(Frame frame, ReadFrame(c->stream()));
    if (frame.kind == FrameKind::kError) return ErrorOf(frame);
    if (frame.kind == FrameKind::kPullReply && !replied) {
      proto::PullResponse reply;
      PS_RETURN_IF_ERROR(ParseMeta(frame, &reply));
      if (step != nullptr) *step = reply.global_step();
      replied = true;
      continue;
    }
    if (frame.kind == FrameKind::kEnd && replied) break;
    if (frame.kind == FrameKind::kShmChunk && replied) {
      // In the arena: already where the tensor is kept, nothing to copy.
      PS_ASSIGN_OR_RETURN(uint64_t bytes,
                          ReadShmChunk(frame, {c->region.get(), c->arena.get()}, &assembler));
      received += bytes;
      continue;
    }
    if (frame.kind != FrameKind::kChunk || !replied) {
      return DataLoss(std::string("tensor channel: an unexpected ") + FrameKindName(frame.kind) +
                      " frame in reply to a pull");
    }
    if (request.wire_dtype() != proto::DT_BFLOAT16) received += frame.data_bytes;
    PS_RETURN_IF_ERROR(ReadChunk(c->stream(), frame, &assembler));
  }
  PS_RETURN_IF_ERROR(assembler.FinishInto(out));
  Want(received);
  GiveBack(std::move(c));
  return OkStatus();
}

}  // namespace tcp
}  // namespace pstrain
