#include "worker/heartbeat_sender.h"

#include <glog/logging.h>

namespace pstrain {

HeartbeatSender::HeartbeatSender(PsConnection* coordinator, int worker,
                                 std::chrono::milliseconds interval, Clock* clock)
    : coordinator_(coordinator), worker_(worker), interval_(interval), clock_(clock) {
  thread_ = std::thread([this] { Run(); });
}

HeartbeatSender::~HeartbeatSender() { Stop(); }

void HeartbeatSender::Stop() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

StatusOr<int64_t> HeartbeatSender::Refresh() {
  PS_ASSIGN_OR_RETURN(auto response,
                      coordinator_->Heartbeat(worker_, local_step_.load(), loss_.load()));
  if (!response.training_ended().empty()) {
    MutexLock lock(&mu_);
    ended_reason_ = response.training_ended();
  }
  return response.min_live_local_step();
}

std::string HeartbeatSender::training_ended() const {
  MutexLock lock(&mu_);
  return ended_reason_;
}

void HeartbeatSender::Run() {
  MutexLock lock(&mu_);
  while (!stop_) {
    lock.Unlock();
    auto r = Refresh();
    if (!r.ok()) VLOG(1) << "heartbeat: " << r.status().ToString();
    lock.Lock();
    clock_->WaitFor(lock.native(), &cv_, interval_,
                    [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_; });
  }
}

}  // namespace pstrain
