// A server reactor of gRPC's callback API whose call is served by a
// blocking handler on a thread of a pool of ours, with a Write that waits
// for the reactor's callback. The ps's pulls and row exports block (they
// copy out of the store) and so cannot run on gRPC's callback threads;
// this keeps them on threads of ours while using only gRPC's public API.
// A pull waiting for its sync step holds no thread until it is served.
// (Client streams are gathered without a thread: gathering_reader.h.)
//
// A reactor finishes its call with the handler's status and deletes itself
// once gRPC is done with the call (OnDone). One thread at a time calls
// Write: the handler's.
#ifndef PSTRAIN_PS_RPC_BLOCKING_REACTORS_H_
#define PSTRAIN_PS_RPC_BLOCKING_REACTORS_H_

#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <functional>
#include <utility>

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

// A server-streaming call (Pull, ExportRows: its request, then the reply's
// messages). A pull waiting for its sync step holds no thread: the reactor
// is made first, waits (WaitUntil), and is served once the wait is over.
template <typename Message>
class BlockingWriter : public grpc::ServerWriteReactor<Message> {
 public:
  using Handler = std::function<grpc::Status(BlockingWriter*)>;

  // Serves the call with `handler` on a thread of `pool`. Called once.
  void Serve(ThreadPool* pool, Handler handler) {
    pool->Submit([this, handler = std::move(handler)] { this->Finish(handler(this)); });
  }
  // Until Serve: a client that cancels (or whose deadline passes) calls
  // `cancel`, at once if it already has.
  void WaitUntil(std::function<void()> cancel) {
    {
      MutexLock lock(&mu_);
      if (!cancelled_) {
        cancel_ = std::move(cancel);
        return;
      }
    }
    cancel();
  }

  // False once the client has gone away.
  bool Write(const Message& message) {
    writing_.Begin();
    this->StartWrite(&message);
    return writing_.Wait();
  }

  void OnWriteDone(bool ok) override { writing_.Done(ok); }
  void OnCancel() override {
    std::function<void()> cancel;
    {
      MutexLock lock(&mu_);
      cancelled_ = true;
      cancel = std::move(cancel_);
    }
    if (cancel) cancel();
  }
  void OnDone() override { delete this; }

 private:
  ReactorOp writing_;
  Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  std::function<void()> cancel_ ABSL_GUARDED_BY(mu_);
};

using BlockingWriteReactor = BlockingWriter<grpc::ByteBuffer>;

}  // namespace pstrain

#endif  // PSTRAIN_PS_RPC_BLOCKING_REACTORS_H_
