// PsClient: calls one ps task over gRPC. Push and Pull go over the ps's
// tensor channel (ps/tcp/) when it has one, found through GetStatus on the
// first of them; otherwise tensors go over gRPC in chunks
// (ps/tensor_chunks.h), sent from and read into the tensors' own memory
// without protobuf copies (ps/rpc/chunk_codec.h, ps/rpc/generic_call.h).
// Errors follow PsConnection's contract (ps/client/ps_connection.h).
//
// Thread-safe: gRPC channels and stubs may be shared, so one PsClient can
// serve concurrent calls from several threads.
#ifndef PSTRAIN_PS_RPC_PS_CLIENT_H_
#define PSTRAIN_PS_RPC_PS_CLIENT_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <grpcpp/generic/generic_stub.h>
#include "core/mutex.h"
#include "core/status.h"
#include "core/tensor.h"

#include "proto/ps.grpc.pb.h"
#include "ps/client/ps_connection.h"
#include "ps/tcp/tensor_channel_client.h"
#include "ps/tensor_chunks.h"

namespace pstrain {

// How a PsClient moves tensors.
struct PsClientOptions {
  // The size of every gRPC tensor message.
  uint32_t chunk_bytes = kDefaultChunkBytes;
  // How pushed gradients and pulled variables (Pull, not PullState) travel
  // over the tensor channel: DT_FLOAT, or DT_BFLOAT16 (--wire_dtype). Over
  // gRPC they are float32 either way, and the ps keeps and applies float32.
  proto::DataType wire_dtype = proto::DT_FLOAT;
  // Whether the tensor channel to a ps on a loopback address carries its
  // float32 tensors through shared memory (ps/tcp/shared_region.h;
  // --tensor_shm).
  bool shared_memory = true;
};

class PsClient : public PsConnection {
 public:
  // Does not connect yet; the first call does.
  PsClient(int ps_index, const std::string& address, const PsClientOptions& options = {});

  // PsConnection (ps/client/ps_connection.h), over gRPC.
  const std::string& name() const override { return name_; }
  // PsClientOptions' fields, changed later; they take effect for the next
  // transfer (shared memory: when the channel is next opened).
  void set_wire_dtype(proto::DataType wire) { wire_dtype_ = wire; }
  void set_shared_memory(bool on) { shared_memory_ = on; }
  // Whether tensors kept in an arena (ps/tcp/arena_memory.h) would travel
  // through it: a ps on this host, reached through shared memory.
  bool CanUseArena() const { return shared_memory_ && OnThisHost(); }
  // The task's arena, to push from and pull into where the tensors lie.
  void set_arena(std::shared_ptr<const tcp::SharedRegion> arena);
  Status Init(const proto::InitHeader& header, const NamedTensors& values) override;
  Status PullWithRows(uint64_t fingerprint, const std::vector<std::string>& names,
                      const std::vector<proto::TableKeys>& lookups,
                      std::map<std::string, Tensor>* out, int64_t* step, int64_t min_step,
                      std::chrono::milliseconds wait) override;
  Status PullState(uint64_t fingerprint, std::map<std::string, Tensor>* out,
                   int64_t* step) override;
  StatusOr<proto::PushResponse> Push(const proto::PushHeader& header,
                                     const NamedTensors& grads) override;
  // Values written into `into` over the tensor channel with the arena
  // attached; over gRPC, as Push.
  StatusOr<proto::PushResponse> PushAndPull(const proto::PushHeader& header,
                                            const NamedTensors& grads,
                                            const std::map<std::string, Tensor>& into) override;
  // Over the tensor channel, each gradient goes out as it is written; over
  // gRPC, all of them at Finish.
  StatusOr<std::unique_ptr<PushStream>> StartPush(const proto::PushHeader& header) override;
  StatusOr<proto::HeartbeatResponse> Heartbeat(int worker, int64_t local_step, float loss) override;
  Status ExportRows(
      uint64_t fingerprint, const std::string& table, bool delta, bool start_deltas,
      const std::function<Status(const proto::ExportRowsResponse&)>& on_block) override;
  StatusOr<proto::ImportRowsResponse> ImportRows(
      uint64_t fingerprint, const std::function<bool(proto::RowBlock*)>& next) override;
  Status FinishRestore(uint64_t fingerprint) override;
  StatusOr<proto::StatusResponse> GetStatus(std::chrono::milliseconds timeout) override;
  StatusOr<proto::StatusResponse> GetReadiness(std::chrono::milliseconds timeout) override;
  Status WorkerDone(int worker, const std::string& failure) override;
  Status SetLiveWorkers(const std::vector<int>& workers) override;
  Status EndTraining(const std::string& reason) override;
  Status Shutdown(const std::string& reason) override;

  // Whether the tensor channel now carries tensors through shared memory.
  bool SharesMemory();

  // Deadline for calls that move tensors (Init, Pull, Push).
  void set_transfer_timeout(std::chrono::milliseconds t) { transfer_timeout_ = t; }

 private:
  // GetStatus's and GetReadiness's call.
  StatusOr<proto::StatusResponse> AskStatus(const proto::StatusRequest& request,
                                            std::chrono::milliseconds timeout);
  // A loopback address: the only ps that can share memory with this task.
  bool OnThisHost() const;
  void SetDeadline(grpc::ClientContext* ctx, std::chrono::milliseconds t) const;
  // Sends `header` (in a Request) and the tensors' chunks, their data lent
  // through `borrowed`, then reads the reply into *response and finishes
  // the call.
  template <typename Request, typename Header, typename Response>
  Status SendTensors(const std::string& method, const Header& header, const NamedTensors& tensors,
                     Response* response);
  template <typename Request, typename Response>
  Status Control(grpc::Status (proto::Ps::Stub::*method)(grpc::ClientContext*, const Request&,
                                                         Response*),
                 const Request& request);
  Status RunPull(proto::PullRequest request, std::chrono::milliseconds timeout,
                 std::map<std::string, Tensor>* out, int64_t* step);
  // The ps's tensor channel; null when it has none. Asks the ps the first
  // time, and again after the channel failed (the ps may have restarted on
  // another port).
  StatusOr<std::shared_ptr<tcp::TensorChannelClient>> Channel();
  // The outcome of a call over the channel, annotated; forgets the channel
  // when it broke.
  Status ChannelOutcome(Status s);
  // Whether a call over the channel that ended with `s` goes over gRPC
  // instead: the channel could not take it (Action::kOtherRoute),
  // and is passed over for kChannelSkip. Logs why, the first time.
  bool FallBack(const Status& s);
  static constexpr std::chrono::seconds kChannelSkip{5};
  class ChannelPush;
  // Push, and with `into` PushAndPull.
  StatusOr<proto::PushResponse> PushInto(const proto::PushHeader& header, const NamedTensors& grads,
                                         const std::map<std::string, Tensor>* into);

  const std::string name_;  // "ps:1 (localhost:2222)"
  const std::string host_;  // "localhost"
  const uint32_t chunk_bytes_;
  std::chrono::milliseconds transfer_timeout_{std::chrono::minutes(5)};
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<proto::Ps::Stub> stub_;
  // Init, Pull and Push, whose messages we encode and decode ourselves.
  grpc::GenericStub generic_stub_;

  std::atomic<proto::DataType> wire_dtype_{proto::DT_FLOAT};
  std::atomic<bool> shared_memory_{true};
  Mutex channel_mu_;
  bool channel_known_ ABSL_GUARDED_BY(channel_mu_) = false;
  std::shared_ptr<tcp::TensorChannelClient> tensor_channel_ ABSL_GUARDED_BY(channel_mu_);
  std::shared_ptr<const tcp::SharedRegion> arena_ ABSL_GUARDED_BY(channel_mu_);
  // Until then, Push and Pull go over gRPC (FallBack).
  std::chrono::steady_clock::time_point channel_skipped_until_ ABSL_GUARDED_BY(channel_mu_);
  std::atomic<bool> fallback_logged_{false};
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_RPC_PS_CLIENT_H_
