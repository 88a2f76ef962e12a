#include "chief/http/metrics.h"

#include <utility>

namespace pstrain {

void MetricsBoard::Publish(ChiefMetrics m) {
  MutexLock lock(&mu_);
  current_ = std::move(m);
}

ChiefMetrics MetricsBoard::Read() const {
  MutexLock lock(&mu_);
  return current_;
}

bool TaskIsUp(const std::string& state) { return state == "running" || state == "restoring"; }

}  // namespace pstrain
