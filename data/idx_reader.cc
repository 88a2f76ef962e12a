#include "data/idx_reader.h"

#include <zlib.h>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>

namespace pstrain {
namespace data {
namespace {

constexpr uint8_t kUnsignedByteType = 0x08;

// A file's bytes as they are read, inflated on the way when it is gzip
// (every member of it): the values go straight where they are kept, with no
// copy of the whole file, compressed or not, beside them.
class FileBytes {
 public:
  static StatusOr<std::unique_ptr<FileBytes>> Open(const std::string& path) {
    std::unique_ptr<FileBytes> f(new FileBytes(path));
    f->file_ = std::fopen(path.c_str(), "rb");
    if (f->file_ == nullptr) return NotFound(path + ": cannot open: " + std::strerror(errno));
    unsigned char magic[2];
    f->gzip_ = std::fread(magic, 1, 2, f->file_) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    std::rewind(f->file_);
    if (f->gzip_) {
      if (inflateInit2(&f->stream_, 16 + MAX_WBITS) != Z_OK) {
        return Internal(path + ": inflateInit2 failed");
      }
      f->inflating_ = true;
    }
    return f;
  }
  ~FileBytes() {
    if (inflating_) inflateEnd(&stream_);
    if (file_ != nullptr) std::fclose(file_);
  }

  // How many bytes the file holds, uncompressed, if it says (a single gzip
  // member's size, modulo 2^32: exact below 4 GiB); 0 when unknown.
  uint64_t SizeHint() {
    struct stat st;
    if (fstat(fileno(file_), &st) != 0) return 0;
    if (!gzip_) return static_cast<uint64_t>(st.st_size);
    unsigned char trailer[4];
    const long at = std::ftell(file_);
    if (st.st_size < 18 || std::fseek(file_, -4, SEEK_END) != 0 ||
        std::fread(trailer, 1, 4, file_) != 4 || std::fseek(file_, at, SEEK_SET) != 0) {
      return 0;
    }
    return uint64_t{trailer[0]} | uint64_t{trailer[1]} << 8 | uint64_t{trailer[2]} << 16 |
           uint64_t{trailer[3]} << 24;
  }

  // Reads up to n bytes into out: fewer only at the file's end.
  StatusOr<size_t> Read(char* out, size_t n) {
    if (!gzip_) {
      const size_t got = std::fread(out, 1, n, file_);
      if (std::ferror(file_)) return DataLoss(path_ + ": read failed: " + std::strerror(errno));
      return got;
    }
    size_t got = 0;
    while (got < n && !ended_) {
      if (stream_.avail_in == 0) PS_RETURN_IF_ERROR(Refill());
      const bool no_more_input = stream_.avail_in == 0;
      stream_.next_out = reinterpret_cast<Bytef*>(out + got);
      stream_.avail_out = static_cast<uInt>(std::min<size_t>(n - got, 1u << 30));
      const uInt room = stream_.avail_out;
      const int rc = inflate(&stream_, Z_NO_FLUSH);
      got += room - stream_.avail_out;
      produced_ += room - stream_.avail_out;
      if (rc == Z_STREAM_END) {
        // Another gzip member may follow.
        if (stream_.avail_in == 0) PS_RETURN_IF_ERROR(Refill());
        if (stream_.avail_in == 0) {
          ended_ = true;
        } else {
          inflateReset(&stream_);
        }
      } else if (rc == Z_BUF_ERROR && no_more_input) {  // no progress, and nothing more to read
        return DataLoss(path_ + ": truncated gzip stream after " + std::to_string(produced_) +
                        " uncompressed bytes");
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        return DataLoss(
            path_ + ": corrupt gzip stream: " +
            (stream_.msg != nullptr ? stream_.msg : "zlib error " + std::to_string(rc)));
      }
    }
    return got;
  }

 private:
  // The compressed bytes that come next (none at the file's end).
  Status Refill() {
    stream_.next_in = input_;
    stream_.avail_in = static_cast<uInt>(std::fread(input_, 1, sizeof(input_), file_));
    if (std::ferror(file_)) return DataLoss(path_ + ": read failed: " + std::strerror(errno));
    return OkStatus();
  }

  explicit FileBytes(std::string path) : path_(std::move(path)) {
    std::memset(&stream_, 0, sizeof(stream_));
  }

  const std::string path_;
  FILE* file_ = nullptr;
  bool gzip_ = false;
  bool inflating_ = false;
  bool ended_ = false;
  z_stream stream_;
  Bytef input_[1 << 16];
  uint64_t produced_ = 0;  // inflated so far
};

uint32_t BigEndian32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

std::string Hex32(uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof(text), "0x%08x", value);
  return text;
}

}  // namespace

StatusOr<IdxArray> ReadIdxFile(const std::string& path, const ExampleSubset& keep) {
  PS_ASSIGN_OR_RETURN(std::unique_ptr<FileBytes> file, FileBytes::Open(path));
  // The bytes read so far, for a size that does not match the header.
  uint64_t have = 0;
  auto mismatch = [&](uint64_t expected) -> Status {
    char rest[1 << 16];  // what follows, counted
    for (;;) {
      PS_ASSIGN_OR_RETURN(const size_t got, file->Read(rest, sizeof(rest)));
      if (got == 0) break;
      have += got;
    }
    return DataLoss(path + ": IDX size mismatch: expected " + std::to_string(expected) +
                    " bytes, got " + std::to_string(have));
  };
  unsigned char head[4 + 4 * 255];
  PS_ASSIGN_OR_RETURN(have, file->Read(reinterpret_cast<char*>(head), 4));
  if (have < 4) return mismatch(4);
  const uint32_t magic = BigEndian32(head);
  const uint32_t num_dims = magic & 0xff;
  if ((magic >> 16) != 0 || num_dims == 0) {
    return InvalidArgument(path + ": not an IDX file: magic " + Hex32(magic) +
                           ", expected 0x000008NN");
  }
  if (((magic >> 8) & 0xff) != kUnsignedByteType) {
    return InvalidArgument(path + ": unsupported IDX type in magic " + Hex32(magic) +
                           "; only 0x08 (unsigned byte) is supported");
  }
  const uint64_t header = 4 + 4 * uint64_t{num_dims};
  PS_ASSIGN_OR_RETURN(const size_t dims_read,
                      file->Read(reinterpret_cast<char*>(head) + 4, header - 4));
  have += dims_read;
  if (have < header) return mismatch(header);
  IdxArray array;
  uint64_t count = 1;
  for (uint32_t i = 0; i < num_dims; ++i) {
    array.dims.push_back(BigEndian32(head + 4 + 4 * i));
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(array.dims.back()), &count)) {
      return DataLoss(path + ": IDX dimensions overflow 64 bits");
    }
  }
  array.items_in_file = array.dims[0];
  array.dims[0] = keep.KeptOf(array.items_in_file);
  const uint64_t item_bytes = array.items_in_file > 0 ? count / array.items_in_file : 0;
  // Room for the items kept, all at once when the file says its size (only
  // a size that matches exactly is trusted: a gzip size is modulo 2^32,
  // and a header claiming 2^40 bytes must not be reserved); else the
  // values grow as they come.
  const uint64_t hint = file->SizeHint();
  if (count <= hint && hint - count == header) {
    array.values.reserve(static_cast<uint64_t>(array.dims[0]) * item_bytes);
  }
  // The values a piece at a time, each item's bytes kept or passed over.
  std::vector<char> piece(std::min<uint64_t>(count, 1 << 16));
  for (uint64_t at = 0; at < count;) {
    const uint64_t want = std::min<uint64_t>(count - at, piece.size());
    PS_ASSIGN_OR_RETURN(const size_t got, file->Read(piece.data(), want));
    have += got;
    for (uint64_t pos = 0; pos < got;) {
      const uint64_t item = (at + pos) / item_bytes;
      const uint64_t len = std::min<uint64_t>(item_bytes - (at + pos) % item_bytes, got - pos);
      if (keep.Keeps(static_cast<int64_t>(item))) {
        array.values.insert(array.values.end(), piece.data() + pos, piece.data() + pos + len);
      }
      pos += len;
    }
    at += got;
    if (got < want) return mismatch(header + count);
  }
  char extra;
  PS_ASSIGN_OR_RETURN(const size_t trailing, file->Read(&extra, 1));
  have += trailing;
  if (trailing > 0) return mismatch(header + count);
  return array;
}

}  // namespace data
}  // namespace pstrain
