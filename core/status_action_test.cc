// The one table from a failure to its caller's next action: by code and
// hint, whatever the message says.
#include "core/status_action.h"

#include <gtest/gtest.h>

namespace pstrain {
namespace {

TEST(StatusAction, EachCodeHasItsAction) {
  EXPECT_EQ(ActionFor(Unavailable("ps down")), Action::kRetry);
  EXPECT_EQ(ActionFor(DeadlineExceeded("slow")), Action::kRetry);
  EXPECT_EQ(ActionFor(Status(Code::kCancelled, "given up")), Action::kRetry);
  EXPECT_EQ(ActionFor(Aborted("restored")), Action::kRetryStep);
  for (const Status& s : {InvalidArgument("bad"), FailedPrecondition("placement"),
                          ResourceExhausted("--tensor_max_requests"), Internal("bug"),
                          DataLoss("torn"), NotFound("nope"), OkStatus()}) {
    EXPECT_EQ(ActionFor(s), Action::kFail) << s.ToString();
    EXPECT_EQ(IsRetryable(s), false) << s.ToString();
  }
  EXPECT_TRUE(IsRetryable(Unavailable("ps down")));
  EXPECT_TRUE(IsRetryable(Aborted("restored")));
}

// A hint decides over the code: nothing sent goes another way, unread
// goes again; both stay retryable for a caller that cannot do either.
TEST(StatusAction, AHintDecidesOverTheCode) {
  EXPECT_EQ(ActionFor(Unavailable("x").WithHint(Hint::kNotSent)), Action::kOtherRoute);
  EXPECT_EQ(ActionFor(ResourceExhausted("x").WithHint(Hint::kNotSent)), Action::kOtherRoute);
  EXPECT_EQ(ActionFor(Unavailable("x").WithHint(Hint::kUnread)), Action::kResend);
  EXPECT_TRUE(IsRetryable(ResourceExhausted("x").WithHint(Hint::kNotSent)));
}

// The message is for people: any wording, the same action; the words that
// once decided a fallback decide nothing without the hint.
TEST(StatusAction, TheMessageDecidesNothing) {
  for (const char* words :
       {"", "tensor channel unreachable: refused", "tensor channel refused a connection: all busy",
        "tensor channel closed an idle connection: idle for 5 ms"}) {
    EXPECT_EQ(ActionFor(Unavailable(words)), Action::kRetry) << words;
    EXPECT_EQ(ActionFor(ResourceExhausted(words)), Action::kFail) << words;
    EXPECT_EQ(ActionFor(Unavailable(words).WithHint(Hint::kNotSent)), Action::kOtherRoute);
  }
}

TEST(StatusAction, AnnotatingKeepsTheHint) {
  const Status s = Unavailable("gone").WithHint(Hint::kUnread).Annotate("ps:0");
  EXPECT_EQ(s.hint(), Hint::kUnread);
  EXPECT_EQ(s.message(), "ps:0: gone");
  EXPECT_EQ(OkStatus().WithHint(Hint::kUnread).hint(), Hint::kNone);
}

}  // namespace
}  // namespace pstrain
