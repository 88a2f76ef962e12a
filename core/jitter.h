// Jittered: a wait spread by +-20% at random, so that many tasks polling or
// retrying on the same schedule (a thousand workers waiting for one ps) do
// not all arrive at once.
//
// Thread-safe.
#ifndef PSTRAIN_CORE_JITTER_H_
#define PSTRAIN_CORE_JITTER_H_

#include <chrono>

namespace pstrain {

std::chrono::milliseconds Jittered(std::chrono::milliseconds wait);

}  // namespace pstrain

#endif  // PSTRAIN_CORE_JITTER_H_
