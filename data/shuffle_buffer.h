// ShuffleBuffer: TensorFlow's RandomShuffleQueue as tf.train.shuffle_batch
// uses it, for preprocessed examples.
//
// Semantics. The buffer holds at most `capacity` examples; Enqueue blocks
// while it is full. A dequeue takes an example chosen uniformly at random and
// is allowed only while more than `min_after_dequeue` examples are held, so at
// least min_after_dequeue stay behind after every dequeue: examples that
// arrive together leave far apart. Once the producers Close the buffer, that
// floor is lifted and dequeues drain what is left, then report OutOfRange.
//
// Which examples a dequeue chooses among. TensorFlow draws from everything
// held, between min_after_dequeue + 1 and capacity examples depending on how
// far the producers have run ahead, so its output depends on thread timing.
// Here the draw is from a pool of the min_after_dequeue + 1 oldest examples
// not yet taken (while more are held, the rest wait in arrival order behind
// the pool; after Close the pool shrinks as it drains). That is the pool
// TensorFlow has when its consumer keeps up, and it makes the output a
// function of the arrival order and the seed alone: one producer gives the
// same sequence on every run, however the threads are scheduled. With
// min_after_dequeue 0 the buffer is a FIFO.
//
// Thread safety: any number of threads may call Enqueue, Dequeue, DequeueUpTo,
// Close, Cancel and size concurrently. The destructor cancels, and must not
// run while another thread is still inside a call.
#ifndef PSTRAIN_DATA_SHUFFLE_BUFFER_H_
#define PSTRAIN_DATA_SHUFFLE_BUFFER_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <random>
#include <vector>

#include "core/status.h"

namespace pstrain {
namespace data {

// One preprocessed training example.
struct Example {
  std::vector<float> values;  // the image, HWC (none for PIXEL_IDS)
  int64_t index = 0;          // the example's index in its dataset
  int32_t label = 0;
  int64_t epoch = 0;  // the epoch of the shard walk it came from
};

class ShuffleBuffer {
 public:
  // InvalidArgument unless 0 <= min_after_dequeue < capacity. `seed` drives
  // the random choices.
  static StatusOr<std::unique_ptr<ShuffleBuffer>> Create(int64_t capacity,
                                                         int64_t min_after_dequeue, uint64_t seed);
  ~ShuffleBuffer();  // cancels

  ShuffleBuffer(const ShuffleBuffer&) = delete;
  ShuffleBuffer& operator=(const ShuffleBuffer&) = delete;

  // Blocks while the buffer is full, then adds `example`. Cancelled (and the
  // example dropped) once the buffer is closed or cancelled, including while
  // waiting.
  Status Enqueue(Example example);

  // Blocks until a dequeue is allowed, then moves a random example into
  // `out`. OutOfRange once the buffer is closed and empty; Cancelled once it
  // is cancelled, including while waiting.
  Status Dequeue(Example* out);

  // Dequeues up to `n` (> 0) examples, appending them to `out`, in one
  // acquisition of the lock per wake-up. Blocks until it has `n`, or the
  // buffer is closed and empty after at least one: OK then with fewer.
  // OutOfRange if closed and empty before any; Cancelled on cancellation
  // (what was taken stays in `out`).
  Status DequeueUpTo(int64_t n, std::vector<Example>* out);

  // No more enqueues: blocked and later Enqueues fail, dequeues drain what is
  // held. Idempotent.
  void Close();

  // Wakes every waiting call and fails all later ones with Cancelled; what is
  // held is dropped. Idempotent. For shutdown before the producers are done.
  void Cancel();

  // Examples held now.
  int64_t size() const;
  // Enqueue and dequeue calls waiting now (for tests: a call that waits has
  // done all it can until the buffer changes).
  int blocked() const;

  int64_t capacity() const { return capacity_; }
  int64_t min_after_dequeue() const { return min_after_dequeue_; }

 private:
  ShuffleBuffer(int64_t capacity, int64_t min_after_dequeue, uint64_t seed);
  // Examples held (mu_ held).
  int64_t HeldLocked() const;
  // Whether a dequeue may take an example now (mu_ held).
  bool CanTake() const;
  // Takes a random example from the pool and refills it (mu_ held, CanTake).
  Example Take();

  // Constant after construction.
  const int64_t capacity_;
  const int64_t min_after_dequeue_;

  mutable std::mutex mu_;
  std::condition_variable not_full_;  // producers wait here
  std::condition_variable can_take_;  // consumers wait here
  std::vector<Example> pool_;         // guarded by mu_; at most min_after_dequeue + 1
  std::deque<Example> waiting_;  // guarded by mu_; arrival order; non-empty only when pool_ is full
  std::mt19937_64 rng_;          // guarded by mu_
  bool closed_ = false;          // guarded by mu_
  bool cancelled_ = false;       // guarded by mu_
  int blocked_ = 0;              // guarded by mu_
  // Waits on `cv` until ready(), counted in blocked_ meanwhile.
  template <typename Ready>
  void WaitLocked(std::condition_variable* cv, std::unique_lock<std::mutex>* lock, Ready ready);
};

}  // namespace data
}  // namespace pstrain

#endif  // PSTRAIN_DATA_SHUFFLE_BUFFER_H_
