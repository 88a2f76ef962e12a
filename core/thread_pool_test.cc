#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace pstrain {
namespace {

// Blocks every task until released: how the pool's growth shows.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  int waiting = 0;
  void Wait() {
    std::unique_lock<std::mutex> lock(mu);
    ++waiting;
    cv.notify_all();
    cv.wait(lock, [this] { return open; });
  }
  void AwaitWaiting(int n) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return waiting >= n; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu);
    open = true;
    cv.notify_all();
  }
};

TEST(ThreadPool, GrowsWithBlockingWorkUpToItsCapAndRunsTheRestInTurn) {
  Gate gate;
  std::atomic<int> done{0};
  {
    ThreadPool pool(3, std::chrono::seconds(60));
    for (int i = 0; i < 5; ++i) {
      pool.Submit([&] {
        gate.Wait();
        ++done;
      });
    }
    gate.AwaitWaiting(3);  // three at once: one thread each
    EXPECT_EQ(pool.threads(), 3);
    EXPECT_EQ(done.load(), 0);
    gate.Open();
  }  // the destructor runs the two that waited, and the threads end
  EXPECT_EQ(done.load(), 5);
}

TEST(ThreadPool, ThreadsEndOnceIdle) {
  ThreadPool pool(4, std::chrono::milliseconds(1));
  std::mutex mu;
  std::condition_variable cv;
  bool ran = false;
  pool.Submit([&] {
    std::lock_guard<std::mutex> lock(mu);
    ran = true;
    cv.notify_all();
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return ran; });
  }
  // Polls the pool's own count: the thread ends after 1 ms without work.
  while (pool.threads() > 0) std::this_thread::yield();
  EXPECT_EQ(pool.threads(), 0);
  // And the pool makes one again for new work.
  std::atomic<bool> again{false};
  pool.Submit([&] { again = true; });
  while (!again) std::this_thread::yield();
}

}  // namespace
}  // namespace pstrain
