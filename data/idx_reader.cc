#include "data/idx_reader.h"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace pstrain {
namespace data {
namespace {

constexpr uint8_t kUnsignedByteType = 0x08;

StatusOr<std::string> ReadRawFile(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (file == nullptr) return NotFound(path + ": cannot open: " + std::strerror(errno));
  std::string bytes;
  char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file.get())) > 0) bytes.append(buffer, n);
  if (std::ferror(file.get())) return DataLoss(path + ": read failed: " + std::strerror(errno));
  return bytes;
}

bool IsGzip(const std::string& bytes) {
  return bytes.size() >= 2 && static_cast<uint8_t>(bytes[0]) == 0x1f &&
         static_cast<uint8_t>(bytes[1]) == 0x8b;
}

// Inflates every gzip member of `compressed`.
StatusOr<std::string> Gunzip(const std::string& path, const std::string& compressed) {
  z_stream stream;
  std::memset(&stream, 0, sizeof(stream));
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) {
    return Internal(path + ": inflateInit2 failed");
  }
  std::unique_ptr<z_stream, int (*)(z_stream*)> cleanup(&stream, &inflateEnd);
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  stream.avail_in = static_cast<uInt>(compressed.size());
  std::string out;
  char buffer[1 << 16];
  while (true) {
    stream.next_out = reinterpret_cast<Bytef*>(buffer);
    stream.avail_out = sizeof(buffer);
    int rc = inflate(&stream, Z_NO_FLUSH);
    out.append(buffer, sizeof(buffer) - stream.avail_out);
    if (rc == Z_STREAM_END) {
      if (stream.avail_in == 0) return out;
      inflateReset(&stream);  // another gzip member follows
    } else if (rc == Z_BUF_ERROR && stream.avail_in == 0) {
      return DataLoss(path + ": truncated gzip stream after " + std::to_string(out.size()) +
                      " uncompressed bytes");
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      return DataLoss(path + ": corrupt gzip stream: " +
                      (stream.msg != nullptr ? stream.msg : "zlib error " + std::to_string(rc)));
    }
  }
}

uint32_t BigEndian32(const std::string& bytes, size_t offset) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data()) + offset;
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

std::string Hex32(uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof(text), "0x%08x", value);
  return text;
}

StatusOr<IdxArray> ParseIdx(const std::string& path, const std::string& bytes) {
  auto truncated = [&path, &bytes](uint64_t expected) {
    return DataLoss(path + ": IDX size mismatch: expected " + std::to_string(expected) +
                    " bytes, got " + std::to_string(bytes.size()));
  };
  if (bytes.size() < 4) return truncated(4);
  const uint32_t magic = BigEndian32(bytes, 0);
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
  if (bytes.size() < header) return truncated(header);
  IdxArray array;
  uint64_t count = 1;
  for (uint32_t i = 0; i < num_dims; ++i) {
    array.dims.push_back(BigEndian32(bytes, 4 + 4 * i));
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(array.dims.back()), &count)) {
      return DataLoss(path + ": IDX dimensions overflow 64 bits");
    }
  }
  if (bytes.size() != header + count) return truncated(header + count);
  array.values.assign(bytes.begin() + header, bytes.end());
  return array;
}

}  // namespace

StatusOr<IdxArray> ReadIdxFile(const std::string& path) {
  PS_ASSIGN_OR_RETURN(std::string bytes, ReadRawFile(path));
  if (IsGzip(bytes)) {
    PS_ASSIGN_OR_RETURN(bytes, Gunzip(path, bytes));
  }
  return ParseIdx(path, bytes);
}

}  // namespace data
}  // namespace pstrain
