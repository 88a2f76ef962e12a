#include "data/batch_queue.h"

#include <algorithm>
#include <random>
#include <string>

#include "data/shard_order.h"

namespace pstrain {
namespace data {
StatusOr<std::unique_ptr<BatchQueue>> BatchQueue::Create(const ImageDataset* ds,
                                                         const BatchQueueOptions& opts) {
  if (ds == nullptr) return InvalidArgument("BatchQueue needs a dataset");
  if (opts.batch_size < 1) {
    return InvalidArgument("batch_size must be positive, got " + std::to_string(opts.batch_size));
  }
  if (opts.num_shards < 1 || opts.shard_index < 0 || opts.shard_index >= opts.num_shards) {
    return InvalidArgument("shard " + std::to_string(opts.shard_index) + " of " +
                           std::to_string(opts.num_shards) + " is not in 0.." +
                           std::to_string(opts.num_shards - 1));
  }
  if (opts.epochs < 0) {
    return InvalidArgument("epochs must be >= 0 (0: for ever), got " + std::to_string(opts.epochs));
  }
  if (opts.capacity < 1) {
    return InvalidArgument("capacity must be positive, got " + std::to_string(opts.capacity));
  }
  if (ds->count <= opts.shard_index) {
    return InvalidArgument("shard " + std::to_string(opts.shard_index) + " of " +
                           std::to_string(opts.num_shards) + " has no examples: the dataset has " +
                           std::to_string(ds->count));
  }
  return std::unique_ptr<BatchQueue>(new BatchQueue(ds, opts));
}

BatchQueue::BatchQueue(const ImageDataset* ds, const BatchQueueOptions& opts)
    : ds_(ds),
      opts_(opts),
      shard_(ShardIndices(ds->count, opts.shard_index, opts.num_shards)),
      producer_([this] { Run(); }) {}

BatchQueue::~BatchQueue() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  not_full_.notify_all();
  producer_.join();
}

bool BatchQueue::Next(Batch* out) {
  std::unique_lock<std::mutex> lock(mu_);
  not_empty_.wait(lock, [this] { return !queue_.empty() || done_; });
  if (queue_.empty()) return false;
  *out = std::move(queue_.front());
  queue_.pop_front();
  not_full_.notify_one();
  return true;
}

void BatchQueue::Run() {
  std::vector<int64_t> order;
  for (int64_t epoch = 0; opts_.epochs == 0 || epoch < opts_.epochs; ++epoch) {
    order = EpochOrder(shard_, opts_.seed, opts_.shard_index, epoch);
    for (size_t begin = 0; begin < order.size(); begin += opts_.batch_size) {
      const size_t end = std::min(order.size(), begin + opts_.batch_size);
      if (!Push(MakeBatch(order, begin, end, epoch))) return;
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  done_ = true;
  not_empty_.notify_all();
}

Batch BatchQueue::MakeBatch(const std::vector<int64_t>& order, size_t begin, size_t end,
                            int64_t epoch) const {
  const int64_t n = static_cast<int64_t>(end - begin);
  const int64_t pixels = ds_->image_size();
  Batch batch;
  batch.images = Tensor({n, ds_->rows, ds_->cols, ds_->depth});
  batch.labels.reserve(n);
  batch.epoch = epoch;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t example = order[begin + i];
    NormalizeImage(*ds_, example, batch.images.data() + i * pixels);
    batch.labels.push_back(ds_->labels[example]);
  }
  return batch;
}

bool BatchQueue::Push(Batch batch) {
  std::unique_lock<std::mutex> lock(mu_);
  not_full_.wait(
      lock, [this] { return stopping_ || queue_.size() < static_cast<size_t>(opts_.capacity); });
  if (stopping_) return false;
  queue_.push_back(std::move(batch));
  not_empty_.notify_one();
  return true;
}

}  // namespace data
}  // namespace pstrain
