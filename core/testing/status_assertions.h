// Assertions on a Status or StatusOr that say why when they fail: the
// status itself, code and message, not "Value of: s.ok()".
//
//   PS_ASSERT_OK(fleet.Push(...));     PS_EXPECT_OK(status);
#ifndef PSTRAIN_CORE_TESTING_STATUS_ASSERTIONS_H_
#define PSTRAIN_CORE_TESTING_STATUS_ASSERTIONS_H_

#include <gtest/gtest.h>

#include <string>

#include "core/status.h"

namespace pstrain {
namespace testing {

// What a status says, for a failure's message: pstrain's, a StatusOr's, or
// another library's that has ToString (LevelDB) or error_message (gRPC).
template <typename S>
auto StatusText(const S& s) -> decltype(s.ToString()) {
  return s.ToString();
}
template <typename T>
std::string StatusText(const StatusOr<T>& s) {
  return s.status().ToString();
}
template <typename S>
auto StatusText(const S& s) -> decltype(s.error_message()) {
  return std::to_string(static_cast<int>(s.error_code())) + ": " + s.error_message();
}

}  // namespace testing
}  // namespace pstrain

#define PS_ASSERT_OK(expr)                                                      \
  do {                                                                          \
    const auto& ps_status_ = (expr);                                            \
    ASSERT_TRUE(ps_status_.ok()) << ::pstrain::testing::StatusText(ps_status_); \
  } while (0)

#define PS_EXPECT_OK(expr)                                                      \
  do {                                                                          \
    const auto& ps_status_ = (expr);                                            \
    EXPECT_TRUE(ps_status_.ok()) << ::pstrain::testing::StatusText(ps_status_); \
  } while (0)

#endif  // PSTRAIN_CORE_TESTING_STATUS_ASSERTIONS_H_
