#include "ps/client/ps_connection.h"

namespace pstrain {
namespace {

// Keeps the gradients it is given and pushes them all at Finish.
class BufferedPushStream : public PushStream {
 public:
  BufferedPushStream(PsConnection* connection, proto::PushHeader header)
      : connection_(connection), header_(std::move(header)) {}

  Status Write(const std::string& name, const Tensor& tensor) override {
    grads_.emplace_back(name, &tensor);
    return OkStatus();
  }
  StatusOr<proto::PushResponse> Finish() override { return connection_->Push(header_, grads_); }

 private:
  PsConnection* const connection_;
  const proto::PushHeader header_;
  NamedTensors grads_;
};

}  // namespace

StatusOr<std::unique_ptr<PushStream>> PsConnection::StartPush(const proto::PushHeader& header) {
  return std::unique_ptr<PushStream>(new BufferedPushStream(this, header));
}

}  // namespace pstrain
