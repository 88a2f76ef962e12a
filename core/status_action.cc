#include "core/status_action.h"

namespace pstrain {

Action ActionFor(const Status& s) {
  switch (s.hint()) {
    case Hint::kNotSent:
      return Action::kOtherRoute;
    case Hint::kUnread:
      return Action::kResend;
    case Hint::kNone:
      break;
  }
  switch (s.code()) {
    case Code::kUnavailable:       // down, restarting, or the connection broke
    case Code::kDeadlineExceeded:  // slow, or a sync step not there yet
    case Code::kCancelled:         // the call was given up on
      return Action::kRetry;
    case Code::kAborted:  // overtaken by a restore
      return Action::kRetryStep;
    case Code::kOk:
    case Code::kUnknown:
    case Code::kInvalidArgument:
    case Code::kNotFound:
    case Code::kAlreadyExists:
    case Code::kPermissionDenied:
    case Code::kResourceExhausted:  // a limit, named with its flag: raised by whoever runs the job
    case Code::kFailedPrecondition:
    case Code::kOutOfRange:
    case Code::kUnimplemented:
    case Code::kInternal:
    case Code::kDataLoss:
      return Action::kFail;
  }
  return Action::kFail;
}

const char* ActionName(Action action) {
  switch (action) {
    case Action::kFail:
      return "fail";
    case Action::kRetry:
      return "retry";
    case Action::kRetryStep:
      return "retry the step";
    case Action::kOtherRoute:
      return "another route";
    case Action::kResend:
      return "resend";
  }
  return "fail";
}

}  // namespace pstrain
