// Server reactors of gRPC's callback API whose call is served by a blocking
// handler on a thread of its own (a ThreadPool's), with Read and Write that
// wait for the reactor's callbacks. The ps's tensor calls block (a pull
// waits for its sync step, a push for the store) and so cannot run on
// gRPC's callback threads; this keeps them on threads of ours while using
// only gRPC's public API.
//
// A reactor finishes its call with the handler's status and deletes itself
// once gRPC is done with the call (OnDone). One thread at a time calls Read
// and Write: the handler's.
#ifndef PSTRAIN_PS_RPC_BLOCKING_REACTORS_H_
#define PSTRAIN_PS_RPC_BLOCKING_REACTORS_H_

#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <functional>

#include "core/mutex.h"
#include "core/thread_pool.h"

namespace pstrain {

// One operation started on a reactor and its completion, waited for.
class ReactorOp {
 public:
  void Begin();
  void Done(bool ok);
  // Blocks until Done; whether the operation succeeded.
  bool Wait();

 private:
  Mutex mu_;
  std::condition_variable done_;
  bool pending_ ABSL_GUARDED_BY(mu_) = false;
  bool ok_ ABSL_GUARDED_BY(mu_) = false;
};

// A client-streaming call (Init, Push).
class BlockingReadReactor : public grpc::ServerReadReactor<grpc::ByteBuffer> {
 public:
  using Handler = std::function<grpc::Status(BlockingReadReactor*)>;
  // Serves the call with `handler` on a thread of `pool`.
  BlockingReadReactor(ThreadPool* pool, Handler handler);
  // Refuses the call at once.
  explicit BlockingReadReactor(const grpc::Status& refusal) { Finish(refusal); }

  // The next message; false at the end of the stream or once it broke.
  bool Read(grpc::ByteBuffer* message);

  void OnReadDone(bool ok) override { reading_.Done(ok); }
  void OnDone() override { delete this; }

 private:
  ReactorOp reading_;
};

// A server-streaming call (Pull: its request, then the reply's messages).
class BlockingWriteReactor : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  using Handler = std::function<grpc::Status(BlockingWriteReactor*)>;
  BlockingWriteReactor(ThreadPool* pool, Handler handler);
  explicit BlockingWriteReactor(const grpc::Status& refusal) { Finish(refusal); }

  // False once the client has gone away.
  bool Write(const grpc::ByteBuffer& message);

  void OnWriteDone(bool ok) override { writing_.Done(ok); }
  void OnDone() override { delete this; }

 private:
  ReactorOp writing_;
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_RPC_BLOCKING_REACTORS_H_
