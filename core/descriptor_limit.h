// The most file descriptors a process may hold. Every connection a ps
// serves is one, so servers (and the tests and benchmarks that flood them)
// raise the limit as far as the system lets them.
#ifndef PSTRAIN_CORE_DESCRIPTOR_LIMIT_H_
#define PSTRAIN_CORE_DESCRIPTOR_LIMIT_H_

#include <cstdint>

namespace pstrain {

// Raises this process's soft RLIMIT_NOFILE to its hard limit; returns the
// soft limit now in force (0 if it cannot be read).
uint64_t RaiseDescriptorLimit();

}  // namespace pstrain

#endif  // PSTRAIN_CORE_DESCRIPTOR_LIMIT_H_
