#include "ps/tcp/tensor_channel_client.h"

#include <utility>

#include "ps/tensor_chunks.h"

namespace pstrain {
namespace tcp {

StatusOr<std::unique_ptr<Socket>> TensorChannelClient::Take(std::chrono::milliseconds timeout) {
  std::unique_ptr<Socket> socket;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      socket = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  if (socket == nullptr) {
    PS_ASSIGN_OR_RETURN(socket, Socket::Connect(host_, port_, timeout));
  }
  socket->SetTimeout(timeout);
  return socket;
}

void TensorChannelClient::GiveBack(std::unique_ptr<Socket> socket) {
  std::lock_guard<std::mutex> lock(mu_);
  idle_.push_back(std::move(socket));
}

Status TensorChannelClient::RefusalOr(Socket* socket, const Status& sent) {
  auto reply = ReadFrame(socket);
  if (reply.ok() && reply->kind == FrameKind::kError) return ErrorOf(*reply);
  return sent;
}

StatusOr<proto::PushResponse> TensorChannelClient::Push(const proto::PushHeader& header,
                                                        const NamedTensors& grads,
                                                        proto::DataType wire,
                                                        std::chrono::milliseconds timeout) {
  PS_ASSIGN_OR_RETURN(auto socket, Take(timeout));
  FrameBatch push;
  push.Add(FrameKind::kPushHeader, &header);
  for (const auto& [name, tensor] : grads) push.AddTensor(name, *tensor, wire);
  push.Add(FrameKind::kEnd, nullptr);
  const Status sent = push.WriteTo(socket.get());
  if (!sent.ok()) return RefusalOr(socket.get(), sent);
  return FinishPush(std::move(socket));
}

StatusOr<proto::PushResponse> TensorChannelClient::FinishPush(std::unique_ptr<Socket> socket) {
  PS_ASSIGN_OR_RETURN(Frame reply, ReadFrame(socket.get()));
  if (reply.kind == FrameKind::kError) return ErrorOf(reply);
  if (reply.kind != FrameKind::kPushReply) {
    return DataLoss(std::string("tensor channel: a ") + FrameKindName(reply.kind) +
                    " frame in reply to a push");
  }
  proto::PushResponse response;
  PS_RETURN_IF_ERROR(ParseMeta(reply, &response));
  GiveBack(std::move(socket));
  return response;
}

// Frames go out as they are written: the header at once, each tensor's
// chunks from its own memory, the End frame at Finish. A stream destroyed
// before Finish closes its connection mid-push, which the ps drops whole.
class TensorChannelClient::Pushing : public PushStream {
 public:
  Pushing(TensorChannelClient* client, std::unique_ptr<Socket> socket, proto::DataType wire)
      : client_(client), socket_(std::move(socket)), wire_(wire) {}

  Status Write(const std::string& name, const Tensor& tensor) override {
    PS_RETURN_IF_ERROR(failed_);
    FrameBatch frames;
    frames.AddTensor(name, tensor, wire_);
    const Status sent = frames.WriteTo(socket_.get());
    if (!sent.ok()) failed_ = RefusalOr(socket_.get(), sent);
    return failed_;
  }

  StatusOr<proto::PushResponse> Finish() override {
    PS_RETURN_IF_ERROR(failed_);
    const Status sent = WriteFrame(socket_.get(), FrameKind::kEnd, nullptr);
    if (!sent.ok()) return RefusalOr(socket_.get(), sent);
    return client_->FinishPush(std::move(socket_));
  }

 private:
  TensorChannelClient* const client_;
  std::unique_ptr<Socket> socket_;
  const proto::DataType wire_;
  Status failed_;  // the first failed Write's, after which nothing is sent
};

StatusOr<std::unique_ptr<PushStream>> TensorChannelClient::StartPush(
    const proto::PushHeader& header, proto::DataType wire, std::chrono::milliseconds timeout) {
  PS_ASSIGN_OR_RETURN(auto socket, Take(timeout));
  const Status sent = WriteFrame(socket.get(), FrameKind::kPushHeader, &header);
  if (!sent.ok()) return RefusalOr(socket.get(), sent);
  return std::unique_ptr<PushStream>(new Pushing(this, std::move(socket), wire));
}

Status TensorChannelClient::Pull(const proto::PullRequest& request,
                                 std::map<std::string, Tensor>* out, int64_t* step,
                                 std::chrono::milliseconds timeout) {
  PS_ASSIGN_OR_RETURN(auto socket, Take(timeout));
  Status sent = WriteFrame(socket.get(), FrameKind::kPullRequest, &request);
  if (!sent.ok()) return RefusalOr(socket.get(), sent);
  TensorAssembler assembler;
  assembler.Reuse(out);
  bool replied = false;
  for (;;) {
    PS_ASSIGN_OR_RETURN(Frame frame, ReadFrame(socket.get()));
    if (frame.kind == FrameKind::kError) return ErrorOf(frame);
    if (frame.kind == FrameKind::kPullReply && !replied) {
      proto::PullResponse reply;
      PS_RETURN_IF_ERROR(ParseMeta(frame, &reply));
      if (step != nullptr) *step = reply.global_step();
      replied = true;
      continue;
    }
    if (frame.kind == FrameKind::kEnd && replied) break;
    if (frame.kind != FrameKind::kChunk || !replied) {
      return DataLoss(std::string("tensor channel: an unexpected ") + FrameKindName(frame.kind) +
                      " frame in reply to a pull");
    }
    PS_RETURN_IF_ERROR(ReadChunk(socket.get(), frame, &assembler));
  }
  PS_RETURN_IF_ERROR(assembler.FinishInto(out));
  GiveBack(std::move(socket));
  return OkStatus();
}

}  // namespace tcp
}  // namespace pstrain
