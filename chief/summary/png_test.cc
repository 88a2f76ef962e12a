#include "chief/summary/png.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

namespace pstrain {
namespace {

uint32_t BigEndian32(const std::string& s, size_t at) {
  return (static_cast<uint32_t>(static_cast<uint8_t>(s[at])) << 24) |
         (static_cast<uint32_t>(static_cast<uint8_t>(s[at + 1])) << 16) |
         (static_cast<uint32_t>(static_cast<uint8_t>(s[at + 2])) << 8) |
         static_cast<uint32_t>(static_cast<uint8_t>(s[at + 3]));
}

struct Decoded {
  int width = 0, height = 0, color_type = -1;
  std::vector<uint8_t> pixels;
};

// A tiny PNG reader for what EncodePng writes: 8-bit, not interlaced, every
// row filtered with None. Checks the signature and every chunk CRC.
Decoded DecodePng(const std::string& png) {
  Decoded d;
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  std::string idat;
  size_t at = 8;
  bool ended = false;
  while (at + 12 <= png.size() && !ended) {
    const uint32_t length = BigEndian32(png, at);
    const std::string type = png.substr(at + 4, 4);
    const std::string data = png.substr(at + 8, length);
    const uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(png.data() + at + 4), 4 + length);
    EXPECT_EQ(BigEndian32(png, at + 8 + length), crc) << "chunk " << type;
    if (type == "IHDR") {
      d.width = BigEndian32(data, 0);
      d.height = BigEndian32(data, 4);
      EXPECT_EQ(data[8], 8) << "bit depth";
      d.color_type = data[9];
      EXPECT_EQ(data[12], 0) << "interlace";
    } else if (type == "IDAT") {
      idat += data;
    } else if (type == "IEND") {
      ended = true;
    }
    at += 12 + length;
  }
  EXPECT_TRUE(ended);
  EXPECT_EQ(at, png.size());
  const int channels[] = {1, 0, 3, 0, 2, 0, 4};
  const size_t row_bytes = static_cast<size_t>(d.width) * channels[d.color_type];
  std::vector<uint8_t> raw(d.height * (row_bytes + 1));
  uLongf raw_size = raw.size();
  EXPECT_EQ(
      uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(idat.data()), idat.size()),
      Z_OK);
  EXPECT_EQ(raw_size, raw.size());
  for (int y = 0; y < d.height; ++y) {
    EXPECT_EQ(raw[y * (row_bytes + 1)], 0) << "filter of row " << y;
    const uint8_t* row = &raw[y * (row_bytes + 1) + 1];
    d.pixels.insert(d.pixels.end(), row, row + row_bytes);
  }
  return d;
}

TEST(Png, RoundTripsEveryChannelCount) {
  const int expected_color_type[] = {0, 0, 4, 2, 6};
  for (int channels = 1; channels <= 4; ++channels) {
    const int height = 5, width = 7;
    std::vector<uint8_t> pixels(height * width * channels);
    for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i * 37 + channels);
    StatusOr<std::string> png = EncodePng(height, width, channels, pixels.data());
    ASSERT_TRUE(png.ok()) << png.status().ToString();
    const Decoded d = DecodePng(*png);
    EXPECT_EQ(d.height, height);
    EXPECT_EQ(d.width, width);
    EXPECT_EQ(d.color_type, expected_color_type[channels]);
    EXPECT_EQ(d.pixels, pixels) << channels << " channels";
  }
}

TEST(Png, RejectsBadShape) {
  const uint8_t pixel[4] = {};
  EXPECT_EQ(EncodePng(0, 1, 1, pixel).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(EncodePng(1, -1, 1, pixel).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(EncodePng(1, 1, 0, pixel).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(EncodePng(1, 1, 5, pixel).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace pstrain
