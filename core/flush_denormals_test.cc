#include "core/flush_denormals.h"

#include <gtest/gtest.h>

#include <limits>
#include <thread>

namespace pstrain {
namespace {

// Computed at run time, under the thread's mode, never folded at compile
// time.
__attribute__((noinline)) float Product(float a, float b) {
  volatile float x = a, y = b;
  return x * y;
}

TEST(FlushDenormals, FlushesDenormalResultsOnlyWhileInScope) {
  const float tiny = std::numeric_limits<float>::min();  // the smallest normal float
  EXPECT_GT(Product(tiny, 0.5f), 0.0f);                  // a denormal result
  {
    ScopedFlushDenormals flush;
    EXPECT_EQ(Product(tiny, 0.5f), 0.0f);
    EXPECT_EQ(Product(tiny, 2.0f), 2.0f * tiny);  // normal numbers are untouched
  }
  EXPECT_GT(Product(tiny, 0.5f), 0.0f);
}

TEST(FlushDenormals, ReadsDenormalInputsAsZero) {
  const float denormal = std::numeric_limits<float>::denorm_min();
  ScopedFlushDenormals flush;
  EXPECT_EQ(Product(denormal, 1e30f), 0.0f);
}

TEST(FlushDenormals, SetsOnlyTheCallingThread) {
  const float tiny = std::numeric_limits<float>::min();
  float other = 0.0f;
  std::thread([&] {
    FlushDenormalsInThisThread();
    other = Product(tiny, 0.5f);
  }).join();
  EXPECT_EQ(other, 0.0f);
  EXPECT_GT(Product(tiny, 0.5f), 0.0f);
}

}  // namespace
}  // namespace pstrain
