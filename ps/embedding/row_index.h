// RowIndex: key -> row number for an embedding table whose rows keep their
// own keys (EmbeddingTable). Open addressing with linear probing and no
// collisions; an entry is 8 bytes, the row number and the top 32 bits of
// the key's hash (its tag), which also choose the key's home entry: a probe
// compares tags and reads a row's key only when they match, and growing or
// erasing reads no key at all. Rows stay where they are while the index
// grows: a table is read row by row (a checkpoint) while it trains.
//
// Memory: at most kMaxLoad of the entries used, growth by half (so at
// least kMaxLoad / 1.5 used after it): at most 8 / 0.466 = 17.2 bytes a
// key. Erase shifts later entries back (no tombstones).
//
// Find and Erase take `key_of`, a function of a row number that gives the
// row's key. Keys are placed by SplitMix64 of the key with a seed of the
// index's own (see KeyIndex).
//
// Thread-compatible: the owner locks.
#ifndef PSTRAIN_PS_EMBEDDING_ROW_INDEX_H_
#define PSTRAIN_PS_EMBEDDING_ROW_INDEX_H_

#include <algorithm>
#include <cstdint>
#include <memory>

#include "core/huge_pages.h"
#include "core/prefetch.h"
#include "core/splitmix64.h"
#include "ps/embedding/open_addressing.h"

namespace pstrain {

class RowIndex {
 public:
  static constexpr uint32_t kAbsent = UINT32_MAX;  // no row is this
  static constexpr double kMaxLoad = open_addressing::kMaxLoad;
  static constexpr uint64_t kBytesPerEntry = sizeof(uint64_t);

  // The key's row, or kAbsent.
  template <typename KeyOf>
  uint32_t Find(int64_t key, const KeyOf& key_of) const {
    if (size_ == 0) return kAbsent;
    const uint32_t tag = Tag(key);
    for (uint64_t i = Home(tag);; i = Next(i)) {
      const uint64_t e = entries_[i];
      if (e == 0) return kAbsent;
      if (static_cast<uint32_t>(e >> 32) == tag) {
        const uint32_t row = static_cast<uint32_t>(e) - 1;
        if (key_of(row) == key) return row;
      }
    }
  }

  // Adds key -> row (row < kAbsent); the key must be absent. Grows first
  // when the index is full.
  void Insert(int64_t key, uint32_t row) {
    const uint64_t capacity = open_addressing::CapacityFor(capacity_, size_ + 1);
    if (capacity != capacity_) Rehash(capacity);
    const uint32_t tag = Tag(key);
    uint64_t i = Home(tag);
    while (entries_[i] != 0) i = Next(i);
    entries_[i] = (uint64_t{tag} << 32) | (uint64_t{row} + 1);
    ++size_;
  }

  // Removes the key; false when it was absent.
  template <typename KeyOf>
  bool Erase(int64_t key, const KeyOf& key_of) {
    if (size_ == 0) return false;
    const uint32_t tag = Tag(key);
    uint64_t hole = Home(tag);
    for (;; hole = Next(hole)) {
      const uint64_t e = entries_[hole];
      if (e == 0) return false;
      if (static_cast<uint32_t>(e >> 32) == tag && key_of(static_cast<uint32_t>(e) - 1) == key) {
        break;
      }
    }
    entries_[hole] = 0;
    --size_;
    // Backward shift (open_addressing.h).
    for (uint64_t i = Next(hole);; i = Next(i)) {
      const uint64_t e = entries_[i];
      if (e == 0) return true;
      const uint64_t home = Home(static_cast<uint32_t>(e >> 32));
      if (open_addressing::MovesIntoHole(home, hole, i)) {
        entries_[hole] = e;
        entries_[i] = 0;
        hole = i;
      }
    }
  }

  // For a Find of `key` soon: warms the cache line of its home entry.
  void PrefetchHome(int64_t key) const {
    if (capacity_ > 0) Prefetch(&entries_[Home(Tag(key))]);
  }
  // The row the key's home entry names when their tags match (most often
  // the key's row: a row to warm for a Find soon), else kAbsent. Reads that
  // entry only.
  uint32_t GuessRow(int64_t key) const {
    if (capacity_ == 0) return kAbsent;
    const uint32_t tag = Tag(key);
    const uint64_t e = entries_[Home(tag)];
    return e != 0 && static_cast<uint32_t>(e >> 32) == tag ? static_cast<uint32_t>(e) - 1 : kAbsent;
  }

  int64_t size() const { return size_; }
  uint64_t capacity() const { return capacity_; }
  uint64_t bytes() const { return capacity_ * kBytesPerEntry; }
  // The most the index holds while `more` keys are inserted: its array
  // after the growth they need and the old one beside it while the entries
  // move. bytes() when they fit as it is.
  uint64_t BytesToInsert(int64_t more) const {
    const uint64_t capacity = open_addressing::CapacityFor(capacity_, size_ + more);
    return capacity == capacity_ ? bytes() : (capacity + capacity_) * kBytesPerEntry;
  }

 private:
  static constexpr uint64_t kSeed = 0x632be59bd9b4e019ull;  // not SplitMix64's own increment

  static uint32_t Tag(int64_t key) {
    return static_cast<uint32_t>(SplitMix64(static_cast<uint64_t>(key) ^ kSeed) >> 32);
  }
  uint64_t Home(uint32_t tag) const { return ReduceToRange(uint64_t{tag} << 32, capacity_); }
  uint64_t Next(uint64_t i) const { return i + 1 == capacity_ ? 0 : i + 1; }

  void Rehash(uint64_t capacity) {
    std::unique_ptr<uint64_t[], FreeMemory> old = std::move(entries_);
    const uint64_t old_capacity = capacity_;
    capacity_ = capacity;
    entries_ = MakeRandomReadArray<uint64_t>(capacity);
    std::fill(entries_.get(), entries_.get() + capacity, uint64_t{0});
    for (uint64_t j = 0; j < old_capacity; ++j) {
      const uint64_t e = old[j];
      if (e == 0) continue;
      uint64_t i = Home(static_cast<uint32_t>(e >> 32));
      while (entries_[i] != 0) i = Next(i);
      entries_[i] = e;
    }
  }

  uint64_t capacity_ = 0;
  int64_t size_ = 0;
  std::unique_ptr<uint64_t[], FreeMemory> entries_;  // 0: empty; else tag << 32 | (row + 1)
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_EMBEDDING_ROW_INDEX_H_
