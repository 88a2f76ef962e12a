#include "ps/rpc/blocking_reactors.h"

#include <utility>

namespace pstrain {

void ReactorOp::Begin() {
  MutexLock lock(&mu_);
  pending_ = true;
}

void ReactorOp::Done(bool ok) {
  {
    MutexLock lock(&mu_);
    pending_ = false;
    ok_ = ok;
  }
  done_.notify_all();
}

bool ReactorOp::Wait() {
  MutexLock lock(&mu_);
  done_.wait(*lock.native(), [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !pending_; });
  return ok_;
}

BlockingReadReactor::BlockingReadReactor(ThreadPool* pool, Handler handler) {
  // Finish is the handler thread's last touch: OnDone may delete the
  // reactor as soon as it has been called.
  pool->Submit([this, handler = std::move(handler)] { Finish(handler(this)); });
}

bool BlockingReadReactor::Read(grpc::ByteBuffer* message) {
  reading_.Begin();
  StartRead(message);
  return reading_.Wait();
}

BlockingWriteReactor::BlockingWriteReactor(ThreadPool* pool, Handler handler) {
  pool->Submit([this, handler = std::move(handler)] { Finish(handler(this)); });
}

bool BlockingWriteReactor::Write(const grpc::ByteBuffer& message) {
  writing_.Begin();
  StartWrite(&message);
  return writing_.Wait();
}

}  // namespace pstrain
