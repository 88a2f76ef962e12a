// MemoryBudget: the bytes one ps task may hold (--max_memory_bytes), shared
// by its dense variables and its embedding tables, which grow as keys
// arrive. A growth is reserved before anything is allocated, so a request
// past the limit is refused with nothing changed.
//
// Thread-safe.
#ifndef PSTRAIN_PS_MEMORY_BUDGET_H_
#define PSTRAIN_PS_MEMORY_BUDGET_H_

#include <atomic>
#include <cstdint>

namespace pstrain {

class MemoryBudget {
 public:
  explicit MemoryBudget(uint64_t max_bytes) : max_bytes_(max_bytes) {}

  // Takes `bytes` when they fit under the limit; false (nothing taken)
  // otherwise.
  bool TryReserve(uint64_t bytes) {
    uint64_t used = used_.load();
    do {
      if (bytes > max_bytes_ || used > max_bytes_ - bytes) return false;
    } while (!used_.compare_exchange_weak(used, used + bytes));
    return true;
  }
  // Takes bytes already allocated for what cannot be refused (a list of
  // the keys expiry dropped), even past the limit.
  void Take(uint64_t bytes) { used_.fetch_add(bytes); }
  // Gives back bytes reserved earlier.
  void Release(uint64_t bytes) { used_.fetch_sub(bytes); }

  uint64_t max_bytes() const { return max_bytes_; }
  uint64_t used() const { return used_.load(); }

 private:
  const uint64_t max_bytes_;
  std::atomic<uint64_t> used_{0};
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_MEMORY_BUDGET_H_
