#include "core/bfloat16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace pstrain {
namespace {

float Bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

TEST(Bfloat16, KeepsWhatItCanHoldExactly) {
  const float inf = std::numeric_limits<float>::infinity();
  for (float f : {0.0f, -0.0f, 1.0f, -2.5f, 0.15625f, 65536.0f, inf, -inf}) {
    EXPECT_EQ(Bfloat16ToFloat(FloatToBfloat16(f)), f) << f;
    EXPECT_EQ(std::signbit(Bfloat16ToFloat(FloatToBfloat16(f))), std::signbit(f)) << f;
  }
}

// The published rule: round to nearest, ties to even, on the 16 bits cut off.
TEST(Bfloat16, RoundsToNearestTiesToEven) {
  EXPECT_EQ(FloatToBfloat16(Bits(0x3f800000u)), 0x3f80);  // 1.0
  EXPECT_EQ(FloatToBfloat16(Bits(0x3f807fffu)), 0x3f80);  // just below half: down
  EXPECT_EQ(FloatToBfloat16(Bits(0x3f808001u)), 0x3f81);  // just above half: up
  EXPECT_EQ(FloatToBfloat16(Bits(0x3f808000u)), 0x3f80);  // a tie to the even 0x3f80
  EXPECT_EQ(FloatToBfloat16(Bits(0x3f818000u)), 0x3f82);  // a tie to the even 0x3f82
  EXPECT_EQ(FloatToBfloat16(Bits(0x7f7fffffu)), 0x7f80);  // the largest float rounds to inf
}

TEST(Bfloat16, KeepsNaNsNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(Bfloat16ToFloat(FloatToBfloat16(nan))));
  // A NaN whose payload lies only in the bits cut off must not become inf.
  EXPECT_TRUE(std::isnan(Bfloat16ToFloat(FloatToBfloat16(Bits(0x7f800001u)))));
}

TEST(Bfloat16, ArraysWithinHalfAUnitInTheLastPlace) {
  std::vector<float> in(1000);
  for (size_t i = 0; i < in.size(); ++i) in[i] = std::sin(0.37f * static_cast<float>(i)) * 1e3f;
  std::vector<uint16_t> wire(in.size());
  std::vector<float> back(in.size());
  ToBfloat16(in.data(), static_cast<int64_t>(in.size()), wire.data());
  FromBfloat16(wire.data(), static_cast<int64_t>(wire.size()), back.data());
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_LE(std::fabs(back[i] - in[i]), std::fabs(in[i]) * (1.0f / 256)) << i;
    EXPECT_EQ(wire[i], FloatToBfloat16(in[i]));
  }
}

}  // namespace
}  // namespace pstrain
