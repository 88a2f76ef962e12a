#include "chief/summary/png.h"

#include <zlib.h>

#include <cstring>
#include <vector>

namespace pstrain {
namespace {

// PNG's colour type for each channel count (index 1..4).
constexpr uint8_t kColorType[] = {0, 0, 4, 2, 6};

void AppendU32BigEndian(std::string* out, uint32_t v) {
  const char bytes[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                         static_cast<char>(v >> 8), static_cast<char>(v)};
  out->append(bytes, 4);
}

// A chunk: length, type, data, CRC-32 (zlib's) of type and data.
void AppendChunk(std::string* out, const char type[4], const std::string& data) {
  AppendU32BigEndian(out, static_cast<uint32_t>(data.size()));
  const size_t type_at = out->size();
  out->append(type, 4);
  out->append(data);
  const uLong crc =
      crc32(0L, reinterpret_cast<const Bytef*>(out->data() + type_at), 4 + data.size());
  AppendU32BigEndian(out, static_cast<uint32_t>(crc));
}

}  // namespace

StatusOr<std::string> EncodePng(int height, int width, int channels, const uint8_t* pixels) {
  if (height <= 0 || width <= 0) {
    return InvalidArgument("PNG size must be positive, got " + std::to_string(height) + "x" +
                           std::to_string(width));
  }
  if (channels < 1 || channels > 4) {
    return InvalidArgument("PNG needs 1 to 4 channels, got " + std::to_string(channels));
  }
  const size_t row_bytes = static_cast<size_t>(width) * channels;
  // Every row is prefixed by its filter type, 0 (None).
  std::vector<uint8_t> raw(static_cast<size_t>(height) * (row_bytes + 1));
  for (int y = 0; y < height; ++y) {
    uint8_t* row = &raw[y * (row_bytes + 1)];
    row[0] = 0;
    std::memcpy(row + 1, pixels + y * row_bytes, row_bytes);
  }
  uLongf compressed_size = compressBound(raw.size());
  std::string compressed(compressed_size, '\0');
  const int rc = compress(reinterpret_cast<Bytef*>(compressed.data()), &compressed_size, raw.data(),
                          raw.size());
  if (rc != Z_OK) return Internal("zlib compress failed with code " + std::to_string(rc));
  compressed.resize(compressed_size);

  std::string header;
  AppendU32BigEndian(&header, static_cast<uint32_t>(width));
  AppendU32BigEndian(&header, static_cast<uint32_t>(height));
  header.push_back(8);  // bit depth
  header.push_back(static_cast<char>(kColorType[channels]));
  header.push_back(0);  // compression: deflate
  header.push_back(0);  // filter method: adaptive
  header.push_back(0);  // no interlace

  std::string png("\x89PNG\r\n\x1a\n", 8);
  AppendChunk(&png, "IHDR", header);
  AppendChunk(&png, "IDAT", compressed);
  AppendChunk(&png, "IEND", "");
  return png;
}

}  // namespace pstrain
