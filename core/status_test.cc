#include "core/status.h"
#include "core/testing/status_assertions.h"

#include <gtest/gtest.h>

namespace pstrain {
namespace {

StatusOr<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgument("odd: " + std::to_string(x));
  return x / 2;
}

Status Quarter(int x, int* out) {
  PS_ASSIGN_OR_RETURN(int h, Half(x));
  PS_ASSIGN_OR_RETURN(*out, Half(h));
  return OkStatus();
}

TEST(Status, OkAndErrorsFormat) {
  EXPECT_EQ(OkStatus().ToString(), "OK");
  Status s = NotFound("no such variable conv1/weights");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_EQ(s.ToString(), "NOT_FOUND: no such variable conv1/weights");
  EXPECT_EQ(s.Annotate("ps:1").message(), "ps:1: no such variable conv1/weights");
}

TEST(StatusOr, PropagatesFirstError) {
  int out = 0;
  PS_EXPECT_OK(Quarter(12, &out));
  EXPECT_EQ(out, 3);
  Status s = Quarter(6, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "odd: 3");
}

}  // namespace
}  // namespace pstrain
