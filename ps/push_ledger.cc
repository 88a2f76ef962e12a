#include "ps/push_ledger.h"

#include <string>

namespace pstrain {

StatusOr<PushLedger::Ticket> PushLedger::Begin(const proto::PushHeader& header) {
  Ticket ticket;
  ticket.worker = header.worker();
  ticket.incarnation = header.incarnation();
  ticket.sequence = header.sequence();
  if (ticket.sequence == 0) return ticket;
  // Named only in a refusal: a push that is applied builds no string.
  auto push = [&ticket] {
    return "push " + std::to_string(ticket.sequence) +
           " of worker:" + std::to_string(ticket.worker);
  };
  MutexLock lock(&mu_);
  Entry& e = workers_[ticket.worker];
  // Another start of the worker: what the last one sent is no longer
  // waited for, and cannot come again.
  if (ticket.incarnation != e.incarnation) e = Entry{ticket.incarnation, 0, 0, {}};
  if (ticket.sequence == e.applied) {
    ticket.repeat = true;
    ticket.answer = e.answer;
    return ticket;
  }
  if (ticket.sequence == e.in_flight) {
    return Unavailable(push() + " is being applied; its answer comes to the next try");
  }
  if (ticket.sequence < e.applied) {
    return FailedPrecondition(push() + " is older than push " + std::to_string(e.applied) +
                              ", which this ps applied; not applied");
  }
  e.in_flight = ticket.sequence;
  return ticket;
}

void PushLedger::End(const Ticket& ticket, const StatusOr<proto::PushResponse>& applied) {
  if (ticket.sequence == 0) return;
  MutexLock lock(&mu_);
  auto it = workers_.find(ticket.worker);
  if (it == workers_.end() || it->second.incarnation != ticket.incarnation) return;
  Entry& e = it->second;
  if (e.in_flight == ticket.sequence) e.in_flight = 0;
  if (applied.ok() && ticket.sequence > e.applied) {
    e.applied = ticket.sequence;
    e.answer = *applied;
  }
}

void PushLedger::Clear() {
  MutexLock lock(&mu_);
  workers_.clear();
}

}  // namespace pstrain
