#include "core/copy_row.h"

#include <gtest/gtest.h>

#include <vector>

namespace pstrain {
namespace {

// Every length from none to past two whole blocks: each float of the row
// copied, none beside it touched.
TEST(CopyRow, CopiesExactlyTheRowAtEveryLength) {
  for (int64_t n = 0; n <= 11; ++n) {
    std::vector<float> src(n), dst(n + 2, -1.0f);
    for (int64_t i = 0; i < n; ++i) src[i] = static_cast<float>(i + 1);
    CopyRow(dst.data() + 1, src.data(), n);
    EXPECT_EQ(dst[0], -1.0f) << n;
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(dst[i + 1], src[i]) << n << " at " << i;
    EXPECT_EQ(dst[n + 1], -1.0f) << n;
  }
}

}  // namespace
}  // namespace pstrain
