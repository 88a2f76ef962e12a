// TensorChannelClient: a worker's or the chief's side of one ps's tensor
// channel (ps/tcp/tensor_frames.h). Push and Pull as PsConnection speaks
// them; each call takes an idle connection (or opens one) and gives it back
// after a clean exchange, so concurrent calls each have their own.
// Thread-safe.
#ifndef PSTRAIN_PS_TCP_TENSOR_CHANNEL_CLIENT_H_
#define PSTRAIN_PS_TCP_TENSOR_CHANNEL_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "proto/ps.pb.h"
#include "ps/ps_connection.h"
#include "ps/tcp/socket.h"

namespace pstrain {
namespace tcp {

class TensorChannelClient {
 public:
  // Does not connect yet.
  TensorChannelClient(std::string host, int port) : host_(std::move(host)), port_(port) {}

  // Errors are the ps's refusal as it sent it, or Unavailable /
  // DeadlineExceeded for a connection that failed or stalled for `timeout`.
  // The gradients travel as `wire` (DT_FLOAT or DT_BFLOAT16).
  StatusOr<proto::PushResponse> Push(const proto::PushHeader& header, const NamedTensors& grads,
                                     proto::DataType wire, std::chrono::milliseconds timeout);
  // A push on a connection of its own, each tensor put on the wire as it is
  // written (PushStream); the header goes out at once. Errors as Push's.
  StatusOr<std::unique_ptr<PushStream>> StartPush(const proto::PushHeader& header,
                                                  proto::DataType wire,
                                                  std::chrono::milliseconds timeout);
  // Fills `out` as PsConnection::Pull does, assembling into the tensors
  // already there where names and shapes match; the values travel as
  // request.wire_dtype() says.
  Status Pull(const proto::PullRequest& request, std::map<std::string, Tensor>* out,
              int64_t* step, std::chrono::milliseconds timeout);

 private:
  StatusOr<std::unique_ptr<Socket>> Take(std::chrono::milliseconds timeout);
  void GiveBack(std::unique_ptr<Socket> socket);
  // The reply to a request whose sending failed with `sent`: the ps's Error
  // frame when it refused (and closed) first, else `sent`.
  static Status RefusalOr(Socket* socket, const Status& sent);
  // Reads the ps's answer to a push that was sent whole, and gives the
  // connection back after a clean one.
  StatusOr<proto::PushResponse> FinishPush(std::unique_ptr<Socket> socket);

  class Pushing;

  const std::string host_;
  const int port_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Socket>> idle_;  // guarded by mu_
};

}  // namespace tcp
}  // namespace pstrain

#endif  // PSTRAIN_PS_TCP_TENSOR_CHANNEL_CLIENT_H_
