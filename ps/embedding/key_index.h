// KeyIndex: an open-addressing hash map from int64 keys to uint32 values
// (a row number, a sighting count), with linear probing and no collisions:
// two keys never share an entry.
//
// Memory: 12 bytes an entry (a key and its value side by side, so that a
// probe reads one cache line, not one in each of two arrays), at most
// kMaxLoad of the entries used; a full index grows by half (capacities need
// not be powers of two), so at least kMaxLoad / 1.5 are used afterwards: at
// most 12 / 0.466 = 25.7 bytes a key. Erase shifts later entries back
// (no tombstones), so lookups stay short after many erasures.
//
// Keys are placed by SplitMix64 of the key with a seed of the index's own:
// the ps tasks choose keys' shards by SplitMix64 of the key itself
// (cluster/key_partition.h), so the keys of one shard share its top bits,
// which must not choose the entry too.
//
// Thread-compatible: the owner locks.
#ifndef PSTRAIN_PS_EMBEDDING_KEY_INDEX_H_
#define PSTRAIN_PS_EMBEDDING_KEY_INDEX_H_

#include <cstdint>
#include <cstring>
#include <memory>

#include "ps/embedding/open_addressing.h"

namespace pstrain {

class KeyIndex {
 public:
  static constexpr uint32_t kAbsent = UINT32_MAX;  // no value is this
  static constexpr double kMaxLoad = open_addressing::kMaxLoad;
  static constexpr uint64_t kBytesPerEntry = sizeof(int64_t) + sizeof(uint32_t);

  KeyIndex() = default;
  KeyIndex(KeyIndex&&) = default;
  KeyIndex& operator=(KeyIndex&&) = default;

  // The key's value, or kAbsent.
  uint32_t Find(int64_t key) const;
  // The key's value, to change in place; null when absent. Valid until the
  // next Insert or Erase.
  uint32_t* FindMutable(int64_t key);
  // Adds key -> value (value != kAbsent); the key must be absent. Grows
  // first when the index is full (see BytesToInsert).
  void Insert(int64_t key, uint32_t value);
  // The key's value when present; otherwise adds key -> value and returns
  // kAbsent. One probe where Find then Insert take two.
  uint32_t FindOrInsert(int64_t key, uint32_t value);
  // Warms the cache line of the key's home entry: a caller that probes
  // many keys asks for each some keys ahead, so that the random reads
  // overlap. Nothing before the index has entries (Reserve, Insert).
  void Prefetch(int64_t key) const;
  // Makes room for `keys` keys in all, so that inserting them grows nothing.
  void Reserve(int64_t keys);
  // Removes every key, keeping the entries' memory.
  void Reset();
  // Removes the key; false when it was absent.
  bool Erase(int64_t key);
  void Clear();

  int64_t size() const { return size_; }
  uint64_t capacity() const { return capacity_; }
  // What the index holds now.
  uint64_t bytes() const { return capacity_ * kBytesPerEntry; }
  // The most the index holds while `more` new keys are inserted: its
  // arrays after the growth they need, and the old ones beside them while
  // the entries move. bytes() when they fit as it is.
  uint64_t BytesToInsert(int64_t more) const;

  // Calls f(key, value) for every entry, in no particular order. f must not
  // change the index.
  template <typename F>
  void ForEach(F f) const {
    for (uint64_t i = 0; i < capacity_; ++i) {
      if (entries_[i].value != kAbsent) f(entries_[i].key(), entries_[i].value);
    }
  }

 private:
  uint64_t Home(int64_t key) const;
  // The entry holding `key`, or the empty one where it would go.
  uint64_t Probe(int64_t key) const;
  void Rehash(uint64_t capacity);

  // 12 bytes, 4-aligned: the key as two halves keeps the value aligned.
  struct Entry {
    uint32_t key_halves[2];
    uint32_t value;  // kAbsent: an empty entry
    int64_t key() const {
      int64_t k;
      std::memcpy(&k, key_halves, sizeof(k));
      return k;
    }
    void set_key(int64_t k) { std::memcpy(key_halves, &k, sizeof(k)); }
  };
  static_assert(sizeof(Entry) == kBytesPerEntry);

  uint64_t capacity_ = 0;
  int64_t size_ = 0;
  std::unique_ptr<Entry[]> entries_;
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_EMBEDDING_KEY_INDEX_H_
