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

namespace pstrain {
namespace data {

struct IdxArray {
  std::vector<int64_t> dims;
  std::vector<uint8_t> values;  // product of dims, row-major
};

// Reads the whole file. Errors name the file: NotFound if it cannot be
// opened; InvalidArgument for a wrong magic (shown in hex) or unsupported
// type; DataLoss for a corrupt gzip stream or a size that does not match the
// header (expected vs got bytes).
StatusOr<IdxArray> ReadIdxFile(const std::string& path);

}  // namespace data
}  // namespace pstrain

#endif  // PSTRAIN_DATA_IDX_READER_H_
