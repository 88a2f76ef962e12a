// A block of an embedding table's rows as the ps tasks send them to the
// chief (proto::RowBlock), from plain keys and values: what the checkpoint
// tests feed a CheckpointWriter.
#ifndef PSTRAIN_PS_TESTING_ROW_BLOCKS_H_
#define PSTRAIN_PS_TESTING_ROW_BLOCKS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "proto/ps.pb.h"
#include "ps/embedding/sparse_rows.h"

namespace pstrain {

// `values`: each key's row, its slots beside it; none for an erase block.
inline proto::RowBlock MakeRowBlock(const std::string& table, const std::vector<int64_t>& keys,
                                    const std::vector<float>& values, bool erase = false) {
  proto::RowBlock b;
  b.set_table(table);
  b.set_keys(EncodeKeys(keys));
  b.set_values(
      std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  b.set_erase(erase);
  return b;
}

}  // namespace pstrain

#endif  // PSTRAIN_PS_TESTING_ROW_BLOCKS_H_
