#include "worker/backoff.h"

#include <algorithm>
#include <thread>

namespace pstrain {

bool IsRetryable(const Status& s) {
  return s.code() == Code::kUnavailable || s.code() == Code::kAborted ||
         s.code() == Code::kDeadlineExceeded || s.code() == Code::kCancelled;
}

Backoff::Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds max,
                 std::chrono::seconds budget)
    : initial_(initial), max_(max), budget_(budget), next_(initial) {}

bool Backoff::Wait(const StopNotice* stop) {
  const auto now = std::chrono::steady_clock::now();
  if (!failing_) {
    failing_ = true;
    first_failure_ = now;
  }
  if (now - first_failure_ >= budget_) return false;
  const auto wait = next_;
  next_ = std::min(max_, next_ * 2);
  if (stop != nullptr) return !stop->WaitFor(wait);
  std::this_thread::sleep_for(wait);
  return true;
}

void Backoff::Reset() {
  failing_ = false;
  next_ = initial_;
}

}  // namespace pstrain
