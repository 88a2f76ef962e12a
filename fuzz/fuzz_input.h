// Helpers shared by the fuzz targets: a fuzz input as a file (for readers
// that take a path), and as a sequence of length-prefixed parts.
#ifndef PSTRAIN_FUZZ_FUZZ_INPUT_H_
#define PSTRAIN_FUZZ_FUZZ_INPUT_H_

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace pstrain {
namespace fuzz {

// A file of this process's own under /dev/shm (memory, not disk), holding
// `size` bytes; removed on destruction.
class InputFile {
 public:
  InputFile(const char* suffix, const uint8_t* data, size_t size)
      : path_("/dev/shm/pstrain_fuzz_" + std::to_string(getpid()) + suffix) {
    FILE* f = std::fopen(path_.c_str(), "wb");
    if (f != nullptr) {
      if (size > 0) std::fwrite(data, 1, size, f);
      std::fclose(f);
    }
  }
  ~InputFile() { std::remove(path_.c_str()); }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Reads the input as parts, each a 2-byte little-endian length and that
// many bytes (cut short at the input's end).
class Parts {
 public:
  Parts(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool done() const { return pos_ >= size_; }
  uint8_t Byte() { return done() ? 0 : data_[pos_++]; }
  std::string Next() {
    const size_t len = Byte() | (static_cast<size_t>(Byte()) << 8);
    const size_t n = len < size_ - pos_ ? len : size_ - pos_;
    std::string part(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return part;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// Appends `part` to `out` as Parts reads it.
inline void AppendPart(const std::string& part, std::string* out) {
  out->push_back(static_cast<char>(part.size() & 0xff));
  out->push_back(static_cast<char>((part.size() >> 8) & 0xff));
  out->append(part);
}

}  // namespace fuzz
}  // namespace pstrain

#endif  // PSTRAIN_FUZZ_FUZZ_INPUT_H_
