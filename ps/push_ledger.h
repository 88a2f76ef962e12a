// PushLedger: what makes a push apply exactly once on a ps. Each push
// carries its sender's incarnation (a random number drawn at each start of
// the sender) and a sequence number (PsFleet's, one per push, the same on
// every ps); the ledger remembers, per worker, the last push it applied
// and that push's answer. A push sent again because its answer was lost
// (a cut connection, a deadline) gets the first answer, and is not
// applied twice.
//
//   Begin   a new push (or the first of another incarnation): to be
//           applied; the one applied last: its answer again (repeat); one
//           still being applied: Unavailable, to ask again; an older one:
//           FailedPrecondition (its sender has moved on).
//   End     after applying: the answer is kept (an error keeps nothing,
//           and the same push may come again to be applied).
//
// A push without a sequence (0: a client that does not retry) is applied
// as it comes. Thread-safe.
#ifndef PSTRAIN_PS_PUSH_LEDGER_H_
#define PSTRAIN_PS_PUSH_LEDGER_H_

#include <cstdint>
#include <unordered_map>

#include "core/mutex.h"
#include "core/status.h"
#include "proto/ps.pb.h"

namespace pstrain {

class PushLedger {
 public:
  struct Ticket {
    bool repeat = false;         // answered before: `answer` is its answer
    proto::PushResponse answer;  // when repeat
    int worker = 0;
    uint64_t incarnation = 0;
    uint64_t sequence = 0;  // 0: untracked
  };

  StatusOr<Ticket> Begin(const proto::PushHeader& header);
  // After a push Begin said to apply: `applied` is its outcome.
  void End(const Ticket& ticket, const StatusOr<proto::PushResponse>& applied);
  // Forgets every worker (the ps's variables were replaced: what was
  // applied to the old ones is gone with them).
  void Clear();

 private:
  struct Entry {
    uint64_t incarnation = 0;
    uint64_t applied = 0;    // the sequence applied last (0: none yet)
    uint64_t in_flight = 0;  // the sequence being applied (0: none)
    proto::PushResponse answer;
  };

  Mutex mu_;
  std::unordered_map<int, Entry> workers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_PUSH_LEDGER_H_
