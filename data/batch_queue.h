// BatchQueue: one worker's input pipeline over an in-memory image dataset.
//
// Batches (data/batch_source.h) hold images [n, rows, cols, depth] as
// pixel / 255 - 0.5. This shard holds the examples whose index i satisfies
// i % num_shards == shard_index. A background thread shuffles them at the
// start of every epoch and fills a bounded queue of normalized batches ahead
// of the training step. Each epoch's order is a Fisher-Yates shuffle driven by
// std::mt19937_64 seeded from (seed, shard_index, epoch) alone, so it is the
// same on every platform and run, and differs between epochs and shards. The
// last batch of an epoch may be smaller than batch_size; batches never span
// epochs.
//
// Thread safety: Next may be called from any thread; calls are serialized.
// The destructor stops the producer thread and joins it; it must not run
// concurrently with Next.
#ifndef PSTRAIN_DATA_BATCH_QUEUE_H_
#define PSTRAIN_DATA_BATCH_QUEUE_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "data/batch_source.h"
#include "data/mnist_dataset.h"

namespace pstrain {
namespace data {

struct BatchQueueOptions {
  int batch_size = 128;
  int shard_index = 0;
  int num_shards = 1;
  uint64_t seed = 0;
  int64_t epochs = 0;  // 0: for ever
  int capacity = 4;    // batches prepared ahead
};

class BatchQueue : public BatchSource {
 public:
  // Starts the producer thread. `ds` is borrowed and must outlive the queue.
  // InvalidArgument for a null dataset, batch_size < 1, num_shards < 1,
  // shard_index outside [0, num_shards), epochs < 0, capacity < 1, or a shard
  // with no examples.
  static StatusOr<std::unique_ptr<BatchQueue>> Create(const ImageDataset* ds,
                                                      const BatchQueueOptions& opts);
  ~BatchQueue() override;

  BatchQueue(const BatchQueue&) = delete;
  BatchQueue& operator=(const BatchQueue&) = delete;

  // Blocks until a batch is ready and moves it into `out`. Returns false once
  // the last epoch's last batch has been taken (never, if epochs is 0).
  bool Next(Batch* out) override;

  // Number of examples in this shard.
  int64_t examples_per_epoch() const override { return static_cast<int64_t>(shard_.size()); }

 private:
  BatchQueue(const ImageDataset* ds, const BatchQueueOptions& opts);
  void Run();  // the producer thread
  Batch MakeBatch(const std::vector<int64_t>& order, size_t begin, size_t end, int64_t epoch) const;
  // Waits for room, then enqueues; false if the queue is stopping.
  bool Push(Batch batch);

  // Constant after construction.
  const ImageDataset* const ds_;
  const BatchQueueOptions opts_;
  const std::vector<int64_t> shard_;  // this shard's example indices, ascending

  std::mutex mu_;
  std::condition_variable not_empty_;
  std::condition_variable not_full_;
  std::deque<Batch> queue_;  // guarded by mu_
  bool stopping_ = false;    // guarded by mu_; set by the destructor
  bool done_ = false;        // guarded by mu_; the producer has enqueued its last batch

  std::thread producer_;  // started last, joined by the destructor
};

}  // namespace data
}  // namespace pstrain

#endif  // PSTRAIN_DATA_BATCH_QUEUE_H_
