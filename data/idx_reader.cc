#include "data/idx_reader.h"

#include <algorithm>
#include <cstdio>
#include <memory>

#include "core/file_bytes.h"

namespace pstrain {
namespace data {
namespace {

constexpr uint8_t kUnsignedByteType = 0x08;

// Reads up to n bytes of the file: fewer only at its end. A corrupt gzip
// stream is DataLoss naming the file.
StatusOr<size_t> ReadSome(FileBytes* file, const std::string& path, char* out, size_t n) {
  StatusOr<size_t> got = file->Read(out, n);
  if (!got.ok() && got.status().code() == Code::kDataLoss) {
    return DataLoss(path + ": " + got.status().message());
  }
  return got;
}

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
  PS_ASSIGN_OR_RETURN(std::unique_ptr<FileBytes> file,
                      FileBytes::Open(path, 2, &FileBytes::GzipMagic));
  // The bytes read so far, for a size that does not match the header.
  uint64_t have = 0;
  auto mismatch = [&](uint64_t expected) -> Status {
    char rest[1 << 16];  // what follows, counted
    for (;;) {
      PS_ASSIGN_OR_RETURN(const size_t got, ReadSome(file.get(), path, rest, sizeof(rest)));
      if (got == 0) break;
      have += got;
    }
    return DataLoss(path + ": IDX size mismatch: expected " + std::to_string(expected) +
                    " bytes, got " + std::to_string(have));
  };
  unsigned char head[4 + 4 * 255];
  PS_ASSIGN_OR_RETURN(have, ReadSome(file.get(), path, reinterpret_cast<char*>(head), 4));
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
                      ReadSome(file.get(), path, reinterpret_cast<char*>(head) + 4, header - 4));
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
    PS_ASSIGN_OR_RETURN(const size_t got, ReadSome(file.get(), path, piece.data(), want));
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
  PS_ASSIGN_OR_RETURN(const size_t trailing, ReadSome(file.get(), path, &extra, 1));
  have += trailing;
  if (trailing > 0) return mismatch(header + count);
  return array;
}

}  // namespace data
}  // namespace pstrain
