#include "ps/embedding/sparse_rows.h"

#include <algorithm>
#include <cstring>

#include "ps/embedding/key_index.h"

namespace pstrain {

UniqueKeys Unique(const int64_t* keys, int64_t n) {
  UniqueKeys out;
  KeyIndex seen;
  seen.Reserve(n);
  Unique(keys, n, &seen, &out);
  return out;
}

void Unique(const int64_t* keys, int64_t n, KeyIndex* seen, UniqueKeys* out) {
  // Resetting costs the index's whole size: one grown by a far larger
  // batch is dropped instead, and grows again to this one's keys.
  if (seen->capacity() > 16 * static_cast<uint64_t>(std::max<int64_t>(n, 1024))) seen->Clear();
  seen->Reset();
  out->keys.clear();
  out->position.resize(n);
  // The index's entries are random reads: each key's is asked for kAhead
  // keys before its probe, so that the misses overlap.
  constexpr int64_t kAhead = 16;
  for (int64_t i = 0; i < std::min(n, kAhead); ++i) seen->Prefetch(keys[i]);
  for (int64_t i = 0; i < n; ++i) {
    if (i + kAhead < n) seen->Prefetch(keys[i + kAhead]);
    const auto next = static_cast<uint32_t>(out->keys.size());
    const uint32_t at = seen->FindOrInsert(keys[i], next);
    if (at == KeyIndex::kAbsent) out->keys.push_back(keys[i]);
    out->position[i] = static_cast<int32_t>(at == KeyIndex::kAbsent ? next : at);
  }
}

SparseRows SumDuplicates(const int64_t* keys, int64_t n, const float* rows, int64_t dim) {
  return SumDuplicates(Unique(keys, n), rows, dim);
}

SparseRows SumDuplicates(UniqueKeys unique, const float* rows, int64_t dim) {
  const auto n = static_cast<int64_t>(unique.position.size());
  SparseRows out;
  out.rows = Tensor({static_cast<int64_t>(unique.keys.size()), dim});
  float* sum = out.rows.data();
  for (int64_t i = 0; i < n; ++i) {
    float* into = sum + unique.position[i] * dim;
    const float* from = rows + i * dim;
    for (int64_t j = 0; j < dim; ++j) into[j] += from[j];
  }
  out.keys = std::move(unique.keys);
  return out;
}

StatusOr<std::vector<int64_t>> DecodeKeys(const std::string& bytes, const std::string& what) {
  if (bytes.size() % sizeof(int64_t) != 0) {
    return InvalidArgument(what + ": " + std::to_string(bytes.size()) +
                           " bytes of keys, not a multiple of 8");
  }
  std::vector<int64_t> keys(bytes.size() / sizeof(int64_t));
  if (!keys.empty()) std::memcpy(keys.data(), bytes.data(), bytes.size());
  return keys;
}

std::string EncodeKeys(const std::vector<int64_t>& keys) {
  return std::string(reinterpret_cast<const char*>(keys.data()), keys.size() * sizeof(int64_t));
}

}  // namespace pstrain
