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
  bool first;
  {
    MutexLock lock(&mu_);
    first = watched_.empty();
    watched_[ctx] = Watched{call, clock_->Now()};
    woken_ = woken_ || first;
  }
  // With none watched the thread waits for ever: it has a deadline now.
  if (first) changed_.notify_all();
}

void StreamWatch::Touch(grpc::ServerContextBase* ctx) {
  MutexLock lock(&mu_);
  auto it = watched_.find(ctx);
  if (it != watched_.end()) it->second.last = clock_->Now();
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
    Clock::TimePoint next = Clock::TimePoint::max();
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
      lock.Unlock();
      for (grpc::ServerContextBase* ctx : cancel) ctx->TryCancel();
      lock.Lock();
      cancelled_ += cancel.size();
      cancelling_.clear();
      changed_.notify_all();
      continue;  // time has passed meanwhile
    }
    woken_ = false;
    clock_->WaitUntil(lock.native(), &changed_, next,
                      [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return stopping_ || woken_; });
  }
}

}  // namespace pstrain
