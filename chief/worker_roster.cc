#include "chief/worker_roster.h"

#include <glog/logging.h>

#include <cstdio>

namespace pstrain {

WorkerRoster::WorkerRoster(int num_workers, double heartbeat_timeout_secs)
    : heartbeat_timeout_secs_(heartbeat_timeout_secs),
      states_(num_workers, State::kLive),
      heard_(num_workers, false) {}

void WorkerRoster::Update(const proto::StatusResponse& st) {
  for (const proto::WorkerState& w : st.workers()) {
    if (w.worker() < 0 || w.worker() >= static_cast<int>(states_.size())) continue;
    heard_[w.worker()] = true;
    if (w.done() && !w.failure().empty() && failure_.empty()) {
      failure_ = "worker:" + std::to_string(w.worker()) + " failed: " + w.failure();
    }
    State now = State::kLive;
    if (w.done()) {
      now = State::kDone;
    } else if (w.seconds_since_heartbeat() > heartbeat_timeout_secs_) {
      now = State::kDead;
    }
    State& was = states_[w.worker()];
    if (now == State::kDead && was != State::kDead) {
      char secs[32];
      std::snprintf(secs, sizeof(secs), "%.1f", w.seconds_since_heartbeat());
      LOG(WARNING) << "worker:" << w.worker() << " declared dead: no heartbeat for " << secs
                   << " s (last at local step " << w.local_step() << ")";
    } else if (now == State::kLive && was == State::kDead) {
      LOG(INFO) << "worker:" << w.worker() << " is back (local step " << w.local_step() << ")";
    }
    was = now;
  }
}

std::vector<int> WorkerRoster::InState(State state) const {
  std::vector<int> out;
  for (size_t w = 0; w < states_.size(); ++w) {
    if (states_[w] == state) out.push_back(static_cast<int>(w));
  }
  return out;
}

std::vector<int> WorkerRoster::NeverHeardFrom() const {
  std::vector<int> out;
  for (size_t w = 0; w < heard_.size(); ++w) {
    if (!heard_[w]) out.push_back(static_cast<int>(w));
  }
  return out;
}

bool WorkerRoster::JobOver() const {
  return InState(State::kLive).empty() && !InState(State::kDone).empty();
}

std::string WorkerList(const std::vector<int>& workers) {
  if (workers.empty()) return "none";
  std::string out;
  for (int w : workers) out += (out.empty() ? "worker:" : ", worker:") + std::to_string(w);
  return out;
}

}  // namespace pstrain
