#include "ps/embedding/key_index.h"

#include <algorithm>

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
  while (values_[i] != kAbsent && keys_[i] != key) {
    if (++i == capacity_) i = 0;
  }
  return i;
}

uint32_t KeyIndex::Find(int64_t key) const {
  if (size_ == 0) return kAbsent;
  const uint64_t i = Probe(key);
  return values_[i];
}

uint32_t* KeyIndex::FindMutable(int64_t key) {
  if (size_ == 0) return nullptr;
  const uint64_t i = Probe(key);
  return values_[i] == kAbsent ? nullptr : &values_[i];
}

uint64_t KeyIndex::BytesToInsert(int64_t more) const {
  const uint64_t capacity = open_addressing::CapacityFor(capacity_, size_ + more);
  if (capacity == capacity_) return bytes();
  return (capacity + capacity_) * kBytesPerEntry;
}

void KeyIndex::Insert(int64_t key, uint32_t value) {
  const uint64_t capacity = open_addressing::CapacityFor(capacity_, size_ + 1);
  if (capacity != capacity_) Rehash(capacity);
  const uint64_t i = Probe(key);
  keys_[i] = key;
  values_[i] = value;
  ++size_;
}

void KeyIndex::Reserve(int64_t keys) {
  const uint64_t capacity = open_addressing::CapacityFor(capacity_, keys);
  if (capacity != capacity_) Rehash(capacity);
}

bool KeyIndex::Erase(int64_t key) {
  if (size_ == 0) return false;
  uint64_t hole = Probe(key);
  if (values_[hole] == kAbsent) return false;
  values_[hole] = kAbsent;
  --size_;
  // Backward shift: move each later entry of the run into the hole when
  // the hole lies on its way from its home (cyclically), so that every
  // key stays reachable from its home without a gap.
  uint64_t i = hole;
  for (;;) {
    if (++i == capacity_) i = 0;
    if (values_[i] == kAbsent) return true;
    const uint64_t home = Home(keys_[i]);
    if (open_addressing::MovesIntoHole(home, hole, i)) {
      keys_[hole] = keys_[i];
      values_[hole] = values_[i];
      values_[i] = kAbsent;
      hole = i;
    }
  }
}

void KeyIndex::Clear() {
  capacity_ = 0;
  size_ = 0;
  keys_.reset();
  values_.reset();
}

void KeyIndex::Rehash(uint64_t capacity) {
  std::unique_ptr<int64_t[]> old_keys = std::move(keys_);
  std::unique_ptr<uint32_t[]> old_values = std::move(values_);
  const uint64_t old_capacity = capacity_;
  capacity_ = capacity;
  keys_.reset(new int64_t[capacity]);
  values_.reset(new uint32_t[capacity]);
  std::fill(values_.get(), values_.get() + capacity, kAbsent);
  for (uint64_t i = 0; i < old_capacity; ++i) {
    if (old_values[i] == kAbsent) continue;
    const uint64_t j = Probe(old_keys[i]);
    keys_[j] = old_keys[i];
    values_[j] = old_values[i];
  }
}

}  // namespace pstrain
