// PsConnection: one ps task as the workers and the chief reach it, in whole
// tensors and the ps protocol's headers, whatever carries them. PsClient
// (ps/rpc/ps_client.h) carries them over gRPC in chunks; InProcessPs
// (ps/in_process_ps.h) hands them to a PsCore in this process, for tests.
// Every error is a Status naming the ps.
//
// Thread-safe: implementations serve concurrent calls from several threads.
#ifndef PSTRAIN_PS_PS_CONNECTION_H_
#define PSTRAIN_PS_PS_CONNECTION_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "proto/ps.pb.h"

namespace pstrain {
namespace tcp {
class SharedRegion;
}  // namespace tcp

using NamedTensors = std::vector<std::pair<std::string, const Tensor*>>;

// One push whose gradients are written one at a time, as a backward pass
// produces them (PsConnection::StartPush). The ps applies it only once
// Finish has sent the end of it: a stream destroyed before Finish, or one
// whose Write failed, changes nothing on the ps.
//
// Thread-compatible: one thread at a time.
class PushStream {
 public:
  virtual ~PushStream() = default;
  // Sends one gradient; its memory must stay unchanged until Finish
  // returns (a transport may send it from there, or keep it until Finish).
  virtual Status Write(const std::string& name, const Tensor& tensor) = 0;
  // Ends the push after header.num_tensors Writes; the ps's answer.
  virtual StatusOr<proto::PushResponse> Finish() = 0;
};

class PsConnection {
 public:
  virtual ~PsConnection() = default;

  // "ps:1 (localhost:2222)"
  virtual const std::string& name() const = 0;

  // How pushed gradients and pulled variables (Pull, not PullState) travel:
  // DT_FLOAT, or DT_BFLOAT16 where the transport can carry it (PsClient over
  // the tensor channel; others keep float32); the ps keeps and applies
  // float32 either way.
  virtual void set_wire_dtype(proto::DataType) {}
  // Whether tensors to a ps on this host may travel through shared memory
  // where the transport can (PsClient's tensor channel; on by default).
  virtual void set_shared_memory(bool) {}
  // Whether tensors kept in an arena (ps/tcp/shared_arena.h) would travel
  // through it: a ps on this host, reached through shared memory.
  virtual bool CanUseArena() const { return false; }
  // The task's arena, to push from and pull into where the tensors lie.
  virtual void set_arena(std::shared_ptr<const tcp::SharedRegion>) {}

  virtual Status Init(const proto::InitHeader& header, const NamedTensors& values) = 0;
  // Fills `out` with the named variables (all the ps holds when names is
  // empty); `step` (may be null) gets the ps's step. With min_step > 0 the
  // ps answers once it is at that step (sync replicas), or fails with
  // DEADLINE_EXCEEDED after `wait` (0: the transfer timeout).
  virtual Status Pull(uint64_t fingerprint, const std::vector<std::string>& names,
                      std::map<std::string, Tensor>* out, int64_t* step, int64_t min_step = 0,
                      std::chrono::milliseconds wait = std::chrono::milliseconds(0)) = 0;
  // Every tensor the ps holds: variables, slots and shadows (a checkpoint).
  virtual Status PullState(uint64_t fingerprint, std::map<std::string, Tensor>* out,
                           int64_t* step) = 0;
  virtual StatusOr<proto::PushResponse> Push(const proto::PushHeader& header,
                                             const NamedTensors& grads) = 0;
  // A push of header.num_tensors gradients, written as they come. This
  // default keeps them and makes one Push at Finish; a transport that can
  // put each on the wire at once overrides it.
  virtual StatusOr<std::unique_ptr<PushStream>> StartPush(const proto::PushHeader& header);
  virtual StatusOr<proto::HeartbeatResponse> Heartbeat(int worker, int64_t local_step,
                                                       float loss) = 0;
  virtual StatusOr<proto::StatusResponse> GetStatus(std::chrono::milliseconds timeout) = 0;
  virtual Status WorkerDone(int worker) = 0;
  // Sync replicas: the workers that can still push (the chief's view).
  virtual Status SetLiveWorkers(const std::vector<int>& workers) = 0;
  // The chief ends training (PsCore::EndTraining).
  virtual Status EndTraining(const std::string& reason) = 0;
  virtual Status Shutdown(const std::string& reason) = 0;
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_PS_CONNECTION_H_
