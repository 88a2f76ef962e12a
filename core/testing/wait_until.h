// WaitUntil: how a test waits for something another thread or process does
// (a connection closed, a request refused, a line in a task's log): it
// looks every `every` until `done` holds. `limit` only bounds a test whose
// condition never comes true; a passing test waits no longer than the event
// takes (and at most `every` more).
#ifndef PSTRAIN_CORE_TESTING_WAIT_UNTIL_H_
#define PSTRAIN_CORE_TESTING_WAIT_UNTIL_H_

#include <chrono>
#include <functional>
#include <thread>

namespace pstrain {

inline bool WaitUntil(const std::function<bool()>& done,
                      std::chrono::milliseconds limit = std::chrono::seconds(30),
                      std::chrono::milliseconds every = std::chrono::milliseconds(1)) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(every);
  }
  return true;
}

}  // namespace pstrain

#endif  // PSTRAIN_CORE_TESTING_WAIT_UNTIL_H_
