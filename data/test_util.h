// Helpers for data/ tests: temporary directories and IDX files.
#ifndef PSTRAIN_DATA_TEST_UTIL_H_
#define PSTRAIN_DATA_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

namespace pstrain {
namespace data {

// A fresh directory under /tmp, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The bytes of an IDX file of unsigned bytes with the given dims and values.
std::string IdxBytes(const std::vector<uint32_t>& dims, const std::vector<uint8_t>& values);

// Writes `bytes` to `path`, gzip-compressed if `gzip`.
void WriteFile(const std::string& path, const std::string& bytes, bool gzip);

// Writes <dir>/<split>-images-idx3-ubyte[.gz] and -labels-idx1-ubyte[.gz] with
// `count` images of rows x cols; pixel j of image i is (i + j) % 256 and label
// i is i % 10.
void WriteMnistSplit(const std::string& dir, const std::string& split, uint32_t count,
                     uint32_t rows, uint32_t cols, bool gzip);

}  // namespace data
}  // namespace pstrain

#endif  // PSTRAIN_DATA_TEST_UTIL_H_
