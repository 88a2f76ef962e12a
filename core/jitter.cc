#include "core/jitter.h"

#include <random>

namespace pstrain {

std::chrono::milliseconds Jittered(std::chrono::milliseconds wait) {
  thread_local std::minstd_rand random(std::random_device{}());
  std::uniform_real_distribution<double> spread(0.8, 1.2);
  return std::chrono::milliseconds(static_cast<int64_t>(wait.count() * spread(random)));
}

}  // namespace pstrain
