#include "data/test_util.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <zlib.h>

#include <cstdio>
#include <fstream>

namespace pstrain {
namespace data {

TempDir::TempDir() {
  char dir[] = "/tmp/data_test.XXXXXX";
  EXPECT_NE(mkdtemp(dir), nullptr);
  path_ = dir;
}

TempDir::~TempDir() { EXPECT_EQ(std::system(("rm -rf '" + path_ + "'").c_str()), 0); }

std::string IdxBytes(const std::vector<uint32_t>& dims, const std::vector<uint8_t>& values) {
  std::string bytes = {0, 0, 0x08, static_cast<char>(dims.size())};
  for (uint32_t d : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<char>(d >> shift));
  }
  bytes.append(values.begin(), values.end());
  return bytes;
}

void WriteFile(const std::string& path, const std::string& bytes, bool gzip) {
  if (gzip) {
    gzFile file = gzopen(path.c_str(), "wb");
    ASSERT_NE(file, nullptr) << path;
    ASSERT_EQ(gzwrite(file, bytes.data(), bytes.size()), static_cast<int>(bytes.size()));
    ASSERT_EQ(gzclose(file), Z_OK);
  } else {
    std::ofstream(path, std::ios::binary) << bytes;
  }
}

void WriteMnistSplit(const std::string& dir, const std::string& split, uint32_t count,
                     uint32_t rows, uint32_t cols, bool gzip) {
  std::vector<uint8_t> pixels, labels;
  for (uint32_t i = 0; i < count; ++i) {
    for (uint32_t j = 0; j < rows * cols; ++j) pixels.push_back((i + j) % 256);
    labels.push_back(i % 10);
  }
  const std::string ext = gzip ? ".gz" : "";
  WriteFile(dir + "/" + split + "-images-idx3-ubyte" + ext, IdxBytes({count, rows, cols}, pixels),
            gzip);
  WriteFile(dir + "/" + split + "-labels-idx1-ubyte" + ext, IdxBytes({count}, labels), gzip);
}

}  // namespace data
}  // namespace pstrain
