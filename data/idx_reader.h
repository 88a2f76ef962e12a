// Reader for IDX files, the format of MNIST and Fashion-MNIST.
//
// An IDX file is a big-endian header (two zero bytes, a type byte, the number
// of dimensions, then each dimension as uint32) followed by the values in
// row-major order. Only type 0x08 (unsigned byte) is supported. Files may be
// gzip-compressed, detected by the 1f 8b magic. Thread-safe.
#ifndef PSTRAIN_DATA_IDX_READER_H_
#define PSTRAIN_DATA_IDX_READER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "data/example_subset.h"

namespace pstrain {
namespace data {

struct IdxArray {
  std::vector<int64_t> dims;    // dims[0]: the items (slices along it) kept
  int64_t items_in_file = 0;    // the file's own dims[0]
  std::vector<uint8_t> values;  // product of dims, row-major
};

// Reads the file, keeping the items `keep` names (every one by default):
// the others are read past, never held, so a worker's shard of a split
// costs its own size in memory. Errors name the file: NotFound if it does
// not exist, Unavailable if it cannot be opened or read; InvalidArgument for a wrong magic (shown
// in hex) or unsupported type; DataLoss for a corrupt gzip stream or a size that does not match the
// header (expected vs got bytes).
StatusOr<IdxArray> ReadIdxFile(const std::string& path, const ExampleSubset& keep = {});

}  // namespace data
}  // namespace pstrain

#endif  // PSTRAIN_DATA_IDX_READER_H_
