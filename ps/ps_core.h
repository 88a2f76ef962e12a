// PsCore: one ps task's logic, whatever carries its requests: the variable
// store, synchronous or asynchronous application, the worker registry, and
// every check of a request. A transport (ps/rpc/ps_service.h for gRPC) reads
// its wire into these calls and their answers back out; it holds no logic.
//
// Init and Push come in two halves, so that a transport that assembles
// tensors from chunks allocates nothing the ps would refuse: Check*Header
// first, then the tensors assembled under *Limits, then Init or Push with
// them. A request refused at any point changes nothing.
//
// Thread-safe: calls run concurrently (the store and registry lock). The
// shutdown callback runs on the caller's thread, with no lock held.
#ifndef PSTRAIN_PS_PS_CORE_H_
#define PSTRAIN_PS_PS_CORE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/mutex.h"
#include "core/status.h"
#include "core/tensor.h"
#include "proto/ps.pb.h"
#include "ps/push_ledger.h"
#include "ps/tensor_chunks.h"
#include "ps/variable_store.h"
#include "ps/worker_registry.h"

namespace pstrain {

// A client's memory that a transport maps (the tensor channel's arena),
// where a push may ask the ps to write its variables (PsCore::Push); none
// when data is null.
struct ClientMemory {
  char* data = nullptr;
  uint64_t bytes = 0;
};

class PsCore {
 public:
  // The longest reason EndTraining takes, and the longest failure a worker
  // reports with WorkerDone.
  static constexpr size_t kMaxReasonBytes = 1024;

  // Borrows store, which must outlive the core.
  PsCore(int task_index, uint64_t incarnation, VariableStore* store,
         std::function<void(const std::string& reason)> on_shutdown);

  int task_index() const { return task_index_; }
  uint64_t incarnation() const { return incarnation_; }

  // A fresh incarnation: a random number that tells a restarted ps from the
  // one before it.
  static uint64_t NewIncarnation();

  // InvalidArgument for values out of range or an unknown optimizer.
  Status CheckInitHeader(const proto::InitHeader& header) const;
  // An Init's tensors: declared variables or saved state of one
  // ("<variable>/<slot>"), within what the store may hold.
  TensorAssembler::Limits InitLimits(const proto::InitHeader& header) const;
  // (Re)initializes the store: values holds every declared variable and any
  // saved slots and shadows.
  Status Init(const proto::InitHeader& header, std::map<std::string, Tensor> values);

  // A Pull's answer: the store's step when it was read, and the tensors:
  // the variables' values themselves, unchanged while held
  // (VariableStore::ReadShared), or copies of the state.
  struct PullResult {
    int64_t step = 0;
    std::vector<std::pair<std::string, VariableStore::SharedTensor>> tensors;
  };
  // The named variables (every one when names is empty), or with
  // include_state every variable, slot and shadow; and for each lookup
  // the table's rows of its keys, [keys, dim], named by the table, read
  // once the wait is over. min_step > 0 waits until the store reaches that
  // step (sync replicas), at most until `deadline` and 10 minutes, giving
  // up when `cancelled` says so.
  using Lookup = std::pair<std::string, std::vector<int64_t>>;  // table, keys
  StatusOr<PullResult> Pull(uint64_t placement_fingerprint, const std::vector<std::string>& names,
                            bool include_state, int64_t min_step,
                            std::chrono::system_clock::time_point deadline,
                            const std::function<bool()>& cancelled,
                            const std::vector<Lookup>& lookups = {});
  // Pulls waiting for a step now, on every transport.
  int waiting_pulls() const { return waiting_pulls_.load(); }
  // Push streams refused, or broken off, before anything of them was
  // applied (HandlePushStream), on every transport.
  int64_t refused_pushes() const { return refused_pushes_.load(); }
  void CountRefusedPush() { refused_pushes_.fetch_add(1); }
  // A PullRequest as a transport received it: waits at most until its
  // wait_deadline_ms (when set) and the transport's own deadline (max: the
  // transport has none). A wait for a step must have one of the two:
  // InvalidArgument otherwise. `cancelled` is asked every 100 ms at most.
  // Lookups are checked before any wait: a table named twice, keys not a
  // whole number of int64s, more than EmbeddingTable::kMaxKeysPerRequest
  // (its tables' together),
  // an unknown table or a key not this ps's is refused.
  StatusOr<PullResult> Pull(const proto::PullRequest& request,
                            std::chrono::system_clock::time_point transport_deadline,
                            const std::function<bool()>& cancelled);
  // The wait of a PullRequest for its step, without a thread: how a
  // transport serves many waiting pulls with few threads. Checks the
  // request as Pull does (its error: refuse it). 0: no wait is needed,
  // Pull answers it at once (`ready` is not called). Else the wait's id,
  // and `ready` is called once, on another thread and possibly under the
  // store's locks (it must be quick: hand the pull to a thread), with
  // OkStatus once Pull would answer without waiting, or why the pull
  // fails (DeadlineExceeded, Aborted by a restore, Cancelled by
  // CancelPullWait).
  StatusOr<uint64_t> AwaitPullable(const proto::PullRequest& request,
                                   std::chrono::system_clock::time_point transport_deadline,
                                   StepWaiters::Ready ready);
  // Ends wait `id` (Cancelled) unless it has ended; once this returns, its
  // `ready` has returned or will never be called.
  void CancelPullWait(uint64_t id) { store_->CancelStepWait(id); }

  // InvalidArgument for another placement, an unknown worker, more
  // tensors than this ps holds variables and the header names tables, or
  // sparse keys that are malformed (a table twice, a partial key, too
  // many) or for a table this ps does not hold (NotFound). Whether each key
  // is this ps's, Push checks.
  Status CheckPushHeader(const proto::PushHeader& header) const;
  // A Push's tensors: gradients of this ps's variables, each of its
  // variable's shape, and the rows of the tables the header names,
  // [its keys, dim].
  TensorAssembler::Limits PushLimits(const proto::PushHeader& header) const;
  // Applies (async) or offers (sync) the gradients; grads must be the
  // header's num_tensors, the rows of each table the header names under
  // the table's name (repeated keys are summed first). They may be views
  // of a transport's memory (Tensor::View): none is held once Push
  // returns. A push is applied whole or not at all.
  // A push the ps applied before (the same worker, incarnation and
  // sequence: its answer was lost and it came again) is answered as the
  // first time and not applied (ps/push_ledger.h), its values written
  // nowhere.
  //
  // `client`: the client's memory that the transport maps (the tensor
  // channel's arena), where header.arena_rooms lie. Async, each variable a
  // room names is written there once updated (values_in_arena). A room
  // for a name that is not a variable of this push, outside the memory,
  // not float-aligned, not its variable's size, or overlapping another
  // room or a gradient of the push in that memory is InvalidArgument, and
  // nothing is applied. Without client memory the rooms are left alone.
  StatusOr<proto::PushResponse> Push(const proto::PushHeader& header,
                                     std::map<std::string, Tensor> grads, ClientMemory client = {});
  // Pushes answered as repeats, not applied again.
  int64_t repeated_pushes() const { return repeated_pushes_.load(); }

  // A test's seam in the transports (HandlePushStream, which both share):
  // `drop` is asked after each push the ps applied; true drops its answer,
  // and the client sees its call fail as when a connection is cut.
  void set_drop_push_reply(std::function<bool(const proto::PushHeader&)> drop);
  bool DropPushReply(const proto::PushHeader& header) const;

  // A table's rows, in blocks of at most kExportBlockBytes handed to
  // `write` (false: the caller went away), the first with the table's dim,
  // slots and the ps's step. The table trains on meanwhile.
  static constexpr int64_t kExportBlockBytes = 1 << 20;
  Status ExportRows(const proto::ExportRowsRequest& request,
                    const std::function<bool(const proto::ExportRowsResponse&)>& write) const;
  // One block of a restore: its rows written (keys this ps's, whole rows)
  // or, with erase, its keys' rows dropped. Adds what it did to *response.
  Status ImportRows(uint64_t placement_fingerprint, const proto::RowBlock& block,
                    proto::ImportRowsResponse* response);
  // The end of a restore whose rows followed its Init (rows_follow): pulls
  // and pushes are served again.
  Status FinishRestore(uint64_t placement_fingerprint);

  // omit_workers: without the registry's workers (StatusRequest's field).
  proto::StatusResponse GetStatus(bool omit_workers = false) const;
  // `failure` non-empty (at most kMaxReasonBytes): the worker stopped on an
  // error retrying cannot mend.
  Status WorkerDone(int worker, const std::string& failure);
  // Sync replicas: the workers that can still push. Returns the store's step.
  StatusOr<int64_t> SetLiveWorkers(const std::vector<int>& workers);
  StatusOr<proto::HeartbeatResponse> Heartbeat(int worker, int64_t local_step, float loss);
  // The chief's word that training is over, and why (non-empty, at most
  // kMaxReasonBytes): every later heartbeat and status carries it. The first reason
  // stays.
  Status EndTraining(const std::string& reason);
  void Shutdown(const std::string& reason);

 private:
  // A PullRequest's checks before any wait, and the deadline of its wait.
  StatusOr<std::chrono::system_clock::time_point> CheckPullRequest(
      const proto::PullRequest& request,
      std::chrono::system_clock::time_point transport_deadline) const;
  // The store's CheckPlacement, and Unavailable while a restore's rows are
  // still arriving: what a pull or a push is checked with first.
  Status CheckServing(uint64_t placement_fingerprint) const;
  // InvalidArgument unless 0 <= worker < the cluster's worker count (once
  // Init told it).
  Status CheckWorker(int worker) const;
  // A request's lookups or sparse gradients, as far as the header tells: a
  // table named once, known here, a whole number of keys within the limit.
  Status CheckTableKeys(const google::protobuf::RepeatedPtrField<proto::TableKeys>& tables,
                        const std::string& what) const;
  // The keys of each table in `tables`, checked as CheckTableKeys does and
  // each this ps's.
  StatusOr<std::vector<Lookup>> DecodeTableKeys(
      const google::protobuf::RepeatedPtrField<proto::TableKeys>& tables,
      const std::string& what) const;

  // Push after its checks and the ledger's: applied (async) or offered (sync).
  StatusOr<proto::PushResponse> ApplyPush(const proto::PushHeader& header,
                                          std::map<std::string, Tensor> grads, ClientMemory client);
  // The rows of each table the push's keys name, taken out of *grads
  // (repeated keys summed); InvalidArgument for a table without rows.
  StatusOr<std::map<std::string, SparseRows>> TakeTableRows(
      const proto::PushHeader& header, std::map<std::string, Tensor>* grads) const;
  // Where header.arena_rooms put each named variable's value in `client`,
  // checked as Push says.
  static StatusOr<DenseVariables::ValueCopies> RoomsIn(const proto::PushHeader& header,
                                                       const std::map<std::string, Tensor>& grads,
                                                       ClientMemory client);

  const int task_index_;
  const uint64_t incarnation_;
  VariableStore* const store_;
  const std::function<void(const std::string&)> on_shutdown_;
  WorkerRegistry workers_;
  std::atomic<int> num_workers_{0};  // set by Init; 0: not known yet
  // Set by Init, read by Heartbeat; a worker silent this long counts as dead.
  std::atomic<std::chrono::duration<double>> heartbeat_timeout_{std::chrono::seconds(10)};
  mutable Mutex ended_mu_;
  std::string ended_reason_ ABSL_GUARDED_BY(ended_mu_);  // empty while training goes on
  std::atomic<int> waiting_pulls_{0};
  std::atomic<int64_t> refused_pushes_{0};
  PushLedger pushes_;
  std::atomic<int64_t> repeated_pushes_{0};
  mutable Mutex faults_mu_;
  std::function<bool(const proto::PushHeader&)> drop_push_reply_ ABSL_GUARDED_BY(faults_mu_);
  // From an Init with rows_follow to FinishRestore.
  std::atomic<bool> awaiting_rows_{false};
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_PS_CORE_H_
