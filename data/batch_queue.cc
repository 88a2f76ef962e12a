#include "data/batch_queue.h"

#include <algorithm>
#include <random>
#include <string>

namespace pstrain {
namespace data {
namespace {

std::vector<int64_t> ShardIndices(int64_t count, int shard_index, int num_shards) {
  std::vector<int64_t> indices;
  for (int64_t i = shard_index; i < count; i += num_shards) indices.push_back(i);
  return indices;
}

// A uniform integer in [0, n), n > 0, without modulo bias.
uint64_t UniformBelow(std::mt19937_64* rng, uint64_t n) {
  const uint64_t limit = -n % n;  // 2^64 mod n: values below it are rejected
  uint64_t x;
  do {
    x = (*rng)();
  } while (x < limit);
  return x % n;
}

// The RNG of one epoch of one shard: distinct streams for every
// (seed, shard, epoch), decorrelated by odd multipliers.
std::mt19937_64 EpochRng(uint64_t seed, int shard_index, int64_t epoch) {
  return std::mt19937_64(seed ^ (static_cast<uint64_t>(shard_index) * 0x9e3779b97f4a7c15ull) ^
                         (static_cast<uint64_t>(epoch + 1) * 0xbf58476d1ce4e5b9ull));
}

void Shuffle(std::vector<int64_t>* v, std::mt19937_64* rng) {
  for (size_t i = v->size(); i > 1; --i) {
    std::swap((*v)[i - 1], (*v)[UniformBelow(rng, i)]);
  }
}

}  // namespace

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
    order = shard_;
    std::mt19937_64 rng = EpochRng(opts_.seed, opts_.shard_index, epoch);
    Shuffle(&order, &rng);
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
