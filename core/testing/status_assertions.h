// Assertions on a Status or StatusOr that say why when they fail: the
// status itself, code and message, not "Value of: s.ok()".
//
//   PS_ASSERT_OK(fleet.Push(...));     PS_EXPECT_OK(status);
//   PS_EXPECT_CODE(fleet.Push(bad), Code::kInvalidArgument);
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

// A status's code: pstrain's, a StatusOr's, or gRPC's (the same numbers).
inline Code CodeOf(const Status& s) { return s.code(); }
template <typename T>
Code CodeOf(const StatusOr<T>& s) {
  return s.status().code();
}
template <typename S>
auto CodeOf(const S& s) -> decltype(static_cast<Code>(s.error_code())) {
  return static_cast<Code>(s.error_code());
}

// A copy of the status the assertions hold: `expr` may be a member of a
// temporary (`f().status()`), which a reference would outlive.
template <typename S>
S StatusOf(const S& s) {
  return s;
}
template <typename T>
Status StatusOf(const StatusOr<T>& s) {
  return s.status();
}

}  // namespace testing
}  // namespace pstrain

#define PS_ASSERT_OK(expr)                                                      \
  do {                                                                          \
    const auto ps_status_ = ::pstrain::testing::StatusOf(expr);                 \
    ASSERT_TRUE(ps_status_.ok()) << ::pstrain::testing::StatusText(ps_status_); \
  } while (0)

#define PS_EXPECT_OK(expr)                                                      \
  do {                                                                          \
    const auto ps_status_ = ::pstrain::testing::StatusOf(expr);                 \
    EXPECT_TRUE(ps_status_.ok()) << ::pstrain::testing::StatusText(ps_status_); \
  } while (0)

// A failure of the code the caller acts on (core/status_action.h), not
// merely "not OK": PS_ASSERT_CODE(fleet.Push(...), Code::kInvalidArgument).
#define PS_ASSERT_CODE(expr, expected)                                                  \
  do {                                                                                  \
    const auto ps_status_ = ::pstrain::testing::StatusOf(expr);                         \
    ASSERT_EQ(std::string(::pstrain::CodeName(::pstrain::testing::CodeOf(ps_status_))), \
              std::string(::pstrain::CodeName(expected)))                               \
        << ::pstrain::testing::StatusText(ps_status_);                                  \
  } while (0)

#define PS_EXPECT_CODE(expr, expected)                                                  \
  do {                                                                                  \
    const auto ps_status_ = ::pstrain::testing::StatusOf(expr);                         \
    EXPECT_EQ(std::string(::pstrain::CodeName(::pstrain::testing::CodeOf(ps_status_))), \
              std::string(::pstrain::CodeName(expected)))                               \
        << ::pstrain::testing::StatusText(ps_status_);                                  \
  } while (0)

#endif  // PSTRAIN_CORE_TESTING_STATUS_ASSERTIONS_H_
