#include "core/openmp_spin.h"

#include <gtest/gtest.h>

namespace pstrain {
namespace {

TEST(OpenMpSpin, LimitedUnlessTheUserChoseASpinOrAWaitPolicy) {
  EXPECT_EQ(OpenMpSpinToSet(nullptr, nullptr), kOpenMpSpinCount);
  EXPECT_EQ(OpenMpSpinToSet("300000", nullptr), "");
  EXPECT_EQ(OpenMpSpinToSet("", nullptr), "");  // set, even if empty: the user's
  EXPECT_EQ(OpenMpSpinToSet(nullptr, "active"), "");
  EXPECT_EQ(OpenMpSpinToSet(nullptr, "passive"), "");
}

}  // namespace
}  // namespace pstrain
