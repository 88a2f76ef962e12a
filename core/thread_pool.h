// ThreadPool: runs work on threads made as the work needs them, up to
// max_threads (work past that waits its turn in order), each ending once it
// has had nothing to do for keep_idle. So a burst of blocking requests gets a
// thread each, and the threads go when the burst has passed.
//
// Thread-safe. Shutdown (also the destructor's) runs what was submitted
// and waits for every thread to end.
#ifndef PSTRAIN_CORE_THREAD_POOL_H_
#define PSTRAIN_CORE_THREAD_POOL_H_

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>

#include "core/mutex.h"

namespace pstrain {

class ThreadPool {
 public:
  ThreadPool(int max_threads, std::chrono::milliseconds keep_idle)
      : max_threads_(max_threads), keep_idle_(keep_idle) {}
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void Submit(std::function<void()> work);
  void Shutdown();
  // Threads alive now.
  int threads() const;

 private:
  void Run();

  const int max_threads_;
  const std::chrono::milliseconds keep_idle_;
  mutable Mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  int threads_ ABSL_GUARDED_BY(mu_) = 0;
  int idle_ ABSL_GUARDED_BY(mu_) = 0;  // threads waiting for work
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace pstrain

#endif  // PSTRAIN_CORE_THREAD_POOL_H_
