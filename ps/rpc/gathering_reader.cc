#include "ps/rpc/gathering_reader.h"

#include <glog/logging.h>

#include <algorithm>

namespace pstrain {

StreamWatch::StreamWatch(const StreamLimits& limits, Clock* clock)
    : limits_(limits), clock_(clock), thread_([this] { Run(); }) {}

StreamWatch::~StreamWatch() {
  {
    MutexLock lock(&mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void StreamWatch::Watch(grpc::ServerContextBase* ctx, const char* call) {
  // No need to wake the thread: it wakes by now + idle at the latest (Run).
  MutexLock lock(&mu_);
  watched_[ctx] = Watched{call, clock_->Now()};
}

void StreamWatch::Unwatch(grpc::ServerContextBase* ctx) {
  MutexLock lock(&mu_);
  watched_.erase(ctx);
  if (std::this_thread::get_id() == thread_.get_id()) return;
  changed_.wait(*lock.native(), [this, ctx]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return std::find(cancelling_.begin(), cancelling_.end(), ctx) == cancelling_.end();
  });
}

int StreamWatch::watched() const {
  MutexLock lock(&mu_);
  return static_cast<int>(watched_.size());
}

void StreamWatch::Run() {
  MutexLock lock(&mu_);
  while (!stopping_) {
    const Clock::TimePoint now = clock_->Now();
    // Never later than now + idle, so that a stream watched from now on,
    // due no sooner, needs no wake-up: a push costs the thread nothing.
    Clock::TimePoint next = now + limits_.idle;
    for (auto it = watched_.begin(); it != watched_.end();) {
      const Clock::TimePoint due = it->second.last + limits_.idle;
      if (due > now) {
        next = std::min(next, due);
        ++it;
        continue;
      }
      LOG_EVERY_N(WARNING, 20) << "cancelled a " << it->second.call << " stream from "
                               << it->first->peer() << ": no message for " << limits_.idle.count()
                               << " ms";
      cancelling_.push_back(it->first);
      it = watched_.erase(it);
    }
    if (!cancelling_.empty()) {
      const std::vector<grpc::ServerContextBase*> cancel = cancelling_;
      cancelled_ += cancel.size();  // counted before its client can see it
      lock.Unlock();
      for (grpc::ServerContextBase* ctx : cancel) ctx->TryCancel();
      lock.Lock();
      cancelling_.clear();
      changed_.notify_all();
      continue;  // time has passed meanwhile
    }
    clock_->WaitUntil(lock.native(), &changed_, next,
                      [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return stopping_; });
  }
}

}  // namespace pstrain
