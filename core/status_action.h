// What a caller does next about a failure: one table for every transport
// and layer (the tensor channel's client, PsClient, the worker's Trainer),
// decided by the status's code and hint (core/status.h), never by its
// message, which is for people.
#ifndef PSTRAIN_CORE_STATUS_ACTION_H_
#define PSTRAIN_CORE_STATUS_ACTION_H_

#include "core/status.h"

namespace pstrain {

enum class Action {
  kFail,        // report it: sending it again changes nothing (a bad request, a bug)
  kRetry,       // again after a backoff: the peer is down, restarting or slow
  kRetryStep,   // the step again from its pull: a restore overtook it
  kOtherRoute,  // at once another way: nothing of it was sent (Hint::kNotSent)
  kResend,      // at once on a new connection: it was not read (Hint::kUnread)
};

// The action for a failure (kFail for OK, which needs none).
Action ActionFor(const Status& s);
const char* ActionName(Action action);

// Whether a step that failed so is worth retrying: any action but kFail.
inline bool IsRetryable(const Status& s) { return ActionFor(s) != Action::kFail; }

}  // namespace pstrain

#endif  // PSTRAIN_CORE_STATUS_ACTION_H_
