#include "ps/rpc/blocking_reactors.h"

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

}  // namespace pstrain
