#include "data/shuffle_buffer.h"

#include <string>
#include <utility>

#include "data/shard_order.h"

namespace pstrain {
namespace data {

StatusOr<std::unique_ptr<ShuffleBuffer>> ShuffleBuffer::Create(int64_t capacity,
                                                               int64_t min_after_dequeue,
                                                               uint64_t seed) {
  if (min_after_dequeue < 0) {
    return InvalidArgument("min_after_dequeue must be >= 0, got " +
                           std::to_string(min_after_dequeue));
  }
  if (min_after_dequeue >= capacity) {
    return InvalidArgument("min_after_dequeue " + std::to_string(min_after_dequeue) +
                           " must be below capacity " + std::to_string(capacity));
  }
  return std::unique_ptr<ShuffleBuffer>(new ShuffleBuffer(capacity, min_after_dequeue, seed));
}

ShuffleBuffer::ShuffleBuffer(int64_t capacity, int64_t min_after_dequeue, uint64_t seed)
    : capacity_(capacity), min_after_dequeue_(min_after_dequeue), rng_(seed) {
  pool_.reserve(static_cast<size_t>(min_after_dequeue + 1));
}

ShuffleBuffer::~ShuffleBuffer() { Cancel(); }

template <typename Ready>
void ShuffleBuffer::WaitLocked(std::condition_variable* cv, std::unique_lock<std::mutex>* lock,
                               Ready ready) {
  if (ready()) return;
  ++blocked_;
  cv->wait(*lock, ready);
  --blocked_;
}

int ShuffleBuffer::blocked() const {
  std::lock_guard<std::mutex> lock(mu_);
  return blocked_;
}

Status ShuffleBuffer::Enqueue(Example example) {
  std::unique_lock<std::mutex> lock(mu_);
  WaitLocked(&not_full_, &lock,
             [this] { return closed_ || cancelled_ || HeldLocked() < capacity_; });
  if (cancelled_) return Status(Code::kCancelled, "shuffle buffer cancelled");
  if (closed_) return Status(Code::kCancelled, "shuffle buffer closed");
  if (static_cast<int64_t>(pool_.size()) <= min_after_dequeue_) {
    pool_.push_back(std::move(example));
  } else {
    waiting_.push_back(std::move(example));
  }
  if (CanTake()) can_take_.notify_one();
  return OkStatus();
}

Status ShuffleBuffer::Dequeue(Example* out) {
  std::vector<Example> one;
  Status status = DequeueUpTo(1, &one);
  if (status.ok()) *out = std::move(one.front());
  return status;
}

Status ShuffleBuffer::DequeueUpTo(int64_t n, std::vector<Example>* out) {
  std::unique_lock<std::mutex> lock(mu_);
  int64_t taken = 0;
  while (taken < n) {
    WaitLocked(&can_take_, &lock, [this] { return cancelled_ || closed_ || CanTake(); });
    if (cancelled_) return Status(Code::kCancelled, "shuffle buffer cancelled");
    if (!CanTake()) {  // closed and empty
      if (taken > 0) return OkStatus();
      return OutOfRange("shuffle buffer closed and empty");
    }
    while (taken < n && CanTake()) {
      out->push_back(Take());
      ++taken;
    }
    not_full_.notify_all();
  }
  // Another consumer may be able to go on.
  if (CanTake() || closed_) can_take_.notify_one();
  return OkStatus();
}

void ShuffleBuffer::Close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  not_full_.notify_all();
  can_take_.notify_all();
}

void ShuffleBuffer::Cancel() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
    pool_.clear();
    waiting_.clear();
  }
  not_full_.notify_all();
  can_take_.notify_all();
}

int64_t ShuffleBuffer::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return HeldLocked();
}

int64_t ShuffleBuffer::HeldLocked() const {
  return static_cast<int64_t>(pool_.size() + waiting_.size());
}

bool ShuffleBuffer::CanTake() const {
  if (closed_) return !pool_.empty();
  return static_cast<int64_t>(pool_.size()) > min_after_dequeue_;
}

Example ShuffleBuffer::Take() {
  const size_t i = UniformBelow(&rng_, pool_.size());
  Example example = std::move(pool_[i]);
  if (i + 1 != pool_.size()) pool_[i] = std::move(pool_.back());
  pool_.pop_back();
  if (!waiting_.empty()) {
    pool_.push_back(std::move(waiting_.front()));
    waiting_.pop_front();
  }
  return example;
}

}  // namespace data
}  // namespace pstrain
