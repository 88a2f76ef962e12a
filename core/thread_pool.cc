#include "core/thread_pool.h"

#include <glog/logging.h>

#include <system_error>
#include <thread>
#include <utility>

namespace pstrain {

ThreadPool::~ThreadPool() { Shutdown(); }

void ThreadPool::Shutdown() {
  MutexLock lock(&mu_);
  stopping_ = true;
  cv_.notify_all();
  cv_.wait(*lock.native(), [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return threads_ == 0; });
}

void ThreadPool::Submit(std::function<void()> work) {
  MutexLock lock(&mu_);
  queue_.push_back(std::move(work));
  if (idle_ > static_cast<int>(queue_.size()) - 1) {
    cv_.notify_one();
    return;
  }
  if (threads_ >= max_threads_) return;  // a thread takes it once one is free
  ++threads_;
  // Detached: the pool waits for threads_ to reach 0, which each thread
  // says last, under the lock, touching nothing of the pool after it.
  try {
    std::thread([this] { Run(); }).detach();
  } catch (const std::system_error& e) {
    // No thread to be had now: the work waits for one that ends its task,
    // or for the next Submit to try again.
    --threads_;
    LOG_EVERY_N(WARNING, 100) << "ThreadPool: no new thread (" << e.what() << "); " << queue_.size()
                              << " tasks wait";
  }
}

int ThreadPool::threads() const {
  MutexLock lock(&mu_);
  return threads_;
}

void ThreadPool::Run() {
  MutexLock lock(&mu_);
  for (;;) {
    if (queue_.empty()) {
      if (stopping_) break;
      ++idle_;
      const bool woken = cv_.wait_for(
          *lock.native(), keep_idle_,
          [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !queue_.empty() || stopping_; });
      --idle_;
      if (!woken) break;  // nothing to do for keep_idle
      continue;
    }
    std::function<void()> work = std::move(queue_.front());
    queue_.pop_front();
    lock.Unlock();
    work();
    work = nullptr;  // whatever it holds goes before the lock is taken
    lock.Lock();
  }
  --threads_;
  cv_.notify_all();
}

}  // namespace pstrain
