// PsConnection: one ps task as the workers and the chief reach it, in whole
// tensors and the ps protocol's headers, whatever carries them. PsClient
// (ps/rpc/ps_client.h) carries them over gRPC and the tensor channel;
// InProcessPs (ps/testing/in_process_ps.h) hands them to a PsCore in this
// process, for tests. How tensors travel (wire dtype, shared memory, arenas)
// is the transport's business, set where the transport is made.
//
// Errors. Every error is a Status naming the ps ("ps:1 (host:2222): ...").
// Its code and hint mean the same on every transport and every method, and
// what the caller does next is core/status_action.h's table:
//   kUnavailable        the ps cannot be reached, or is restarting and holds
//                       no variables yet. Retry after a backoff.
//   kDeadlineExceeded   the call, or a sync Pull's wait, ran out of time.
//                       Retry.
//   kAborted            the ps was restored while the call waited; the
//                       step it belongs to is void. Retry the step.
//   kCancelled          the caller's side went away. Retry.
//   kFailedPrecondition the request cannot succeed as made (another
//                       placement, an async ps asked for sync work). Do not
//                       retry until the cluster's configuration is fixed.
//   kInvalidArgument, kNotFound, kResourceExhausted, kDataLoss
//                       the request, or the answer, is malformed or over a
//                       limit (the ps's --max_memory_bytes, a frame size).
//                       Never retried: the same request fails the same way.
// A refused Init, Push or PushStream changes nothing on the ps. One whose
// answer was lost (kUnavailable, kDeadlineExceeded: a cut connection, a
// deadline) may have been applied: sent again with the same incarnation
// and sequence in its header, it is answered as the first time and not
// applied twice (ps/push_ledger.h; PsFleet numbers its pushes so). A failed
// Pull may have filled part of `out`.
//
// Thread-safe: implementations serve concurrent calls from several threads.
#ifndef PSTRAIN_PS_CLIENT_PS_CONNECTION_H_
#define PSTRAIN_PS_CLIENT_PS_CONNECTION_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "proto/ps.pb.h"

namespace pstrain {

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

  // (Re)initializes the ps with values for every variable it holds under
  // header's placement (and any saved slots and shadows).
  virtual Status Init(const proto::InitHeader& header, const NamedTensors& values) = 0;
  // Fills `out` with the named variables (all the ps holds when names is
  // empty) and, in the same request, for each table of `lookups` the rows
  // of its keys (each key once, each this ps's) as out[table], [keys,
  // dim], a key without a row answered with its initial value; `step` (may
  // be null) gets the ps's step. With min_step > 0 the ps answers once it
  // is at that step (sync replicas), or fails with DEADLINE_EXCEEDED after
  // `wait` (0: the transfer timeout).
  virtual Status PullWithRows(uint64_t fingerprint, const std::vector<std::string>& names,
                              const std::vector<proto::TableKeys>& lookups,
                              std::map<std::string, Tensor>* out, int64_t* step, int64_t min_step,
                              std::chrono::milliseconds wait) = 0;
  // PullWithRows with no rows.
  Status Pull(uint64_t fingerprint, const std::vector<std::string>& names,
              std::map<std::string, Tensor>* out, int64_t* step, int64_t min_step = 0,
              std::chrono::milliseconds wait = std::chrono::milliseconds(0)) {
    return PullWithRows(fingerprint, names, {}, out, step, min_step, wait);
  }
  // Every tensor the ps holds: variables, slots and shadows (a checkpoint).
  virtual Status PullState(uint64_t fingerprint, std::map<std::string, Tensor>* out,
                           int64_t* step) = 0;
  virtual StatusOr<proto::PushResponse> Push(const proto::PushHeader& header,
                                             const NamedTensors& grads) = 0;
  // Push, then each variable of the push as it is once applied (what a
  // Pull right after would give), written into `into`'s tensor of its name
  // where the transport can have the ps write it there itself: the
  // answer's values_in_arena says it did, every one. Where it cannot
  // (another transport, memory the ps does not map, a push answered as a
  // repeat, sync replicas) `into` is left alone and the caller pulls. This
  // default is Push.
  virtual StatusOr<proto::PushResponse> PushAndPull(const proto::PushHeader& header,
                                                    const NamedTensors& grads,
                                                    const std::map<std::string, Tensor>& into) {
    (void)into;
    return Push(header, grads);
  }
  // A push of header.num_tensors gradients, written as they come. This
  // default keeps them and makes one Push at Finish; a transport that can
  // put each on the wire at once overrides it.
  virtual StatusOr<std::unique_ptr<PushStream>> StartPush(const proto::PushHeader& header);
  // Whether the worker's heartbeat arrived; the ps's view of the job.
  virtual StatusOr<proto::HeartbeatResponse> Heartbeat(int worker, int64_t local_step,
                                                       float loss) = 0;
  // The ps's state, answered even before it is initialized; kUnavailable
  // or kDeadlineExceeded within `timeout` when it does not answer.
  virtual StatusOr<proto::StatusResponse> GetStatus(std::chrono::milliseconds timeout) = 0;
  // GetStatus without what the ps knows of each worker (empty workers and
  // done_workers), whose size grows with the job: what a task polling for
  // the ps to be ready asks.
  virtual StatusOr<proto::StatusResponse> GetReadiness(std::chrono::milliseconds timeout) {
    return GetStatus(timeout);
  }
  // The worker has finished; with a `failure` (at most 1 KB), it stopped on
  // an error retrying cannot mend, which ends the job.
  virtual Status WorkerDone(int worker, const std::string& failure) = 0;
  // Sync replicas: the workers that can still push (the chief's view).
  virtual Status SetLiveWorkers(const std::vector<int>& workers) = 0;
  // Embedding rows in blocks, for checkpoints and restores (gRPC on every
  // transport that has a network). ExportRows hands each block of
  // `table`'s rows on this ps (with changed_after >= 0 only those changed
  // after that step, then the keys dropped since start_deltas) to
  // `on_block` as it arrives, the first reply with the table's dim and
  // slots; an error of on_block ends the call with it. start_deltas: a full
  // export that deltas will follow.
  virtual Status ExportRows(
      uint64_t fingerprint, const std::string& table, bool delta, bool start_deltas,
      const std::function<Status(const proto::ExportRowsResponse&)>& on_block) = 0;
  // Writes the blocks `next` gives (false: no more) into the ps's tables,
  // each applied as it arrives; returns the rows written and erased.
  virtual StatusOr<proto::ImportRowsResponse> ImportRows(
      uint64_t fingerprint, const std::function<bool(proto::RowBlock*)>& next) = 0;
  // A restore begun with rows_follow is whole: the ps serves pulls and
  // pushes again (PsCore::FinishRestore).
  virtual Status FinishRestore(uint64_t fingerprint) = 0;
  // The chief ends training (PsCore::EndTraining).
  virtual Status EndTraining(const std::string& reason) = 0;
  virtual Status Shutdown(const std::string& reason) = 0;
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_CLIENT_PS_CONNECTION_H_
