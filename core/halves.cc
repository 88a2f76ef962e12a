#include "core/halves.h"

#include <sched.h>
#include <unistd.h>

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

namespace pstrain {
namespace {

// Set while this thread runs a half: a RunInHalves inside one runs whole
// (the kept thread is taken, by this very call or its caller).
thread_local bool in_a_half = false;
struct InAHalf {
  InAHalf() { in_a_half = true; }
  ~InAHalf() { in_a_half = false; }
};

bool MayRunOnTwoCpus() {
  static const bool two = [] {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
      return std::thread::hardware_concurrency() > 1;
    }
    return CPU_COUNT(&set) > 1;
  }();
  return two;
}

// One thread kept for the second halves: a thread made and joined for each
// pass cost 30-80 us here, several times a step.
class SecondHalf {
 public:
  // Never destroyed: the thread waits on to the process's end. A child
  // forked after it started has no such thread, and makes its own.
  static SecondHalf* Get() {
    static std::mutex mu;
    static SecondHalf* instance = nullptr;
    std::lock_guard<std::mutex> lock(mu);
    if (instance == nullptr || instance->pid_ != getpid()) instance = new SecondHalf;
    return instance;
  }

  // Runs fn(begin, end) on the kept thread while the caller runs its own
  // half, then waits for it; false (nothing run) while another caller has
  // the thread.
  bool Run(const std::function<void(int64_t, int64_t)>& fn, int64_t begin, int64_t end,
           const std::function<void()>& own_half) {
    std::unique_lock<std::mutex> taken(use_mu_, std::try_to_lock);
    if (!taken.owns_lock()) return false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      fn_ = &fn;
      begin_ = begin;
      end_ = end;
      done_ = false;
    }
    work_cv_.notify_one();
    // Waits for the kept thread however own_half ends: fn lives in the
    // caller's frame.
    struct Join {
      SecondHalf* self;
      ~Join() {
        std::unique_lock<std::mutex> lock(self->mu_);
        self->done_cv_.wait(lock, [&] { return self->done_; });
      }
    } join{this};
    own_half();
    return true;
  }

 private:
  SecondHalf() {
    std::thread([this] { Loop(); }).detach();
  }

  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      work_cv_.wait(lock, [&] { return fn_ != nullptr; });
      const auto* fn = fn_;
      const int64_t begin = begin_, end = end_;
      lock.unlock();
      {
        InAHalf here;
        (*fn)(begin, end);
      }
      lock.lock();
      fn_ = nullptr;
      done_ = true;
      done_cv_.notify_one();
    }
  }

  const pid_t pid_ = getpid();
  std::mutex use_mu_;  // held by the caller whose second half this thread runs
  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t begin_ = 0, end_ = 0;
  bool done_ = false;
};

}  // namespace

void RunInHalves(int64_t n, int64_t min_split, const std::function<void(int64_t, int64_t)>& fn) {
  if (n < min_split || n < 2 || in_a_half || !MayRunOnTwoCpus()) return fn(0, n);
  const int64_t half = n / 2;
  InAHalf here;
  // The kept thread is busy with another caller's half: the CPUs are too.
  if (!SecondHalf::Get()->Run(fn, half, n, [&] { fn(0, half); })) fn(0, n);
}

void CopyInHalves(void* dest, const void* src, size_t n) {
  if (n == 0) return;  // an empty tensor's pointers may be null
  // Split on a cache line, so that the two threads never write one line.
  constexpr int64_t kLine = 64;
  const int64_t lines = static_cast<int64_t>(n / kLine);
  RunInHalves(lines, kSplitElements * sizeof(float) / kLine, [&](int64_t begin, int64_t end) {
    const size_t from = begin * kLine;
    const size_t to = end == lines ? n : end * kLine;
    std::memcpy(static_cast<char*>(dest) + from, static_cast<const char*>(src) + from, to - from);
  });
}

}  // namespace pstrain
