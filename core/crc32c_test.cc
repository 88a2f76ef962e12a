#include "core/crc32c.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace pstrain {
namespace {

// Check values from RFC 3720 (iSCSI), section B.4.
TEST(Crc32c, MatchesRfc3720Vectors) {
  char buf[32];
  std::memset(buf, 0, sizeof(buf));
  EXPECT_EQ(crc32c::Value(buf, sizeof(buf)), 0x8a9136aau);
  std::memset(buf, 0xff, sizeof(buf));
  EXPECT_EQ(crc32c::Value(buf, sizeof(buf)), 0x62a8ab43u);
  for (int i = 0; i < 32; ++i) buf[i] = static_cast<char>(i);
  EXPECT_EQ(crc32c::Value(buf, sizeof(buf)), 0x46dd794eu);
  EXPECT_EQ(crc32c::Value("123456789", 9), 0xe3069283u);
}

TEST(Crc32c, ExtendEqualsWhole) {
  std::string s = "hello parameter servers, hello workers";
  uint32_t whole = crc32c::Value(s.data(), s.size());
  for (size_t cut = 0; cut <= s.size(); ++cut) {
    uint32_t part = crc32c::Extend(crc32c::Value(s.data(), cut), s.data() + cut, s.size() - cut);
    ASSERT_EQ(part, whole) << cut;
  }
}

TEST(Crc32c, MaskRoundTrips) {
  uint32_t crc = crc32c::Value("foo", 3);
  EXPECT_NE(crc32c::Mask(crc), crc);
  EXPECT_EQ(crc32c::Unmask(crc32c::Mask(crc)), crc);
}

}  // namespace
}  // namespace pstrain
