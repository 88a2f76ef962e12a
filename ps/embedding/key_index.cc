#include "ps/embedding/key_index.h"

#include <algorithm>

#include "core/prefetch.h"
#include "core/splitmix64.h"

namespace pstrain {
namespace {

// Not SplitMix64's own increment: see the header.
constexpr uint64_t kIndexSeed = 0x632be59bd9b4e019ull;

}  // namespace

uint64_t KeyIndex::Home(int64_t key) const {
  return ReduceToRange(SplitMix64(static_cast<uint64_t>(key) ^ kIndexSeed), capacity_);
}

uint64_t KeyIndex::Probe(int64_t key) const {
  uint64_t i = Home(key);
  while (entries_[i].value != kAbsent && entries_[i].key() != key) {
    if (++i == capacity_) i = 0;
  }
  return i;
}

uint32_t KeyIndex::Find(int64_t key) const {
  if (size_ == 0) return kAbsent;
  return entries_[Probe(key)].value;
}

uint32_t* KeyIndex::FindMutable(int64_t key) {
  if (size_ == 0) return nullptr;
  Entry& e = entries_[Probe(key)];
  return e.value == kAbsent ? nullptr : &e.value;
}

uint64_t KeyIndex::BytesToInsert(int64_t more) const {
  const uint64_t capacity = open_addressing::CapacityFor(capacity_, size_ + more);
  if (capacity == capacity_) return bytes();
  return (capacity + capacity_) * kBytesPerEntry;
}

void KeyIndex::Insert(int64_t key, uint32_t value) { FindOrInsert(key, value); }

uint32_t KeyIndex::FindOrInsert(int64_t key, uint32_t value) {
  const uint64_t capacity = open_addressing::CapacityFor(capacity_, size_ + 1);
  if (capacity != capacity_) Rehash(capacity);
  Entry& e = entries_[Probe(key)];
  if (e.value != kAbsent) return e.value;
  e.set_key(key);
  e.value = value;
  ++size_;
  return kAbsent;
}

void KeyIndex::Prefetch(int64_t key) const {
  if (capacity_ != 0) pstrain::Prefetch(&entries_[Home(key)]);
}

void KeyIndex::Reserve(int64_t keys) {
  const uint64_t capacity = open_addressing::CapacityFor(capacity_, keys);
  if (capacity != capacity_) Rehash(capacity);
}

bool KeyIndex::Erase(int64_t key) {
  if (size_ == 0) return false;
  uint64_t hole = Probe(key);
  if (entries_[hole].value == kAbsent) return false;
  entries_[hole].value = kAbsent;
  --size_;
  // Backward shift: move each later entry of the run into the hole when
  // the hole lies on its way from its home (cyclically), so that every
  // key stays reachable from its home without a gap.
  uint64_t i = hole;
  for (;;) {
    if (++i == capacity_) i = 0;
    if (entries_[i].value == kAbsent) return true;
    const uint64_t home = Home(entries_[i].key());
    if (open_addressing::MovesIntoHole(home, hole, i)) {
      entries_[hole] = entries_[i];
      entries_[i].value = kAbsent;
      hole = i;
    }
  }
}

void KeyIndex::Reset() {
  for (uint64_t i = 0; i < capacity_; ++i) entries_[i].value = kAbsent;
  size_ = 0;
}

void KeyIndex::Clear() {
  capacity_ = 0;
  size_ = 0;
  entries_.reset();
}

void KeyIndex::Rehash(uint64_t capacity) {
  std::unique_ptr<Entry[]> old = std::move(entries_);
  const uint64_t old_capacity = capacity_;
  capacity_ = capacity;
  entries_.reset(new Entry[capacity]);
  for (uint64_t i = 0; i < capacity; ++i) entries_[i].value = kAbsent;
  for (uint64_t i = 0; i < old_capacity; ++i) {
    if (old[i].value == kAbsent) continue;
    entries_[Probe(old[i].key())] = old[i];
  }
}

}  // namespace pstrain
