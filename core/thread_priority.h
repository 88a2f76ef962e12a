// A thread's own scheduling policy: Linux schedules each thread by its own,
// and the threads a thread starts afterwards (its OpenMP pool's) inherit
// it.
#ifndef PSTRAIN_CORE_THREAD_PRIORITY_H_
#define PSTRAIN_CORE_THREAD_PRIORITY_H_

#include "core/status.h"

namespace pstrain {

// Moves the calling thread to SCHED_IDLE (sched(7)): it runs only on a CPU
// that no other thread wants, and a thread of normal priority waking up
// takes the CPU from it at once. Needs no privilege; going back does
// (CAP_SYS_NICE), so it is for a thread that keeps it. PermissionDenied or
// InvalidArgument, naming the reason, when the kernel refuses.
Status RunThisThreadAtIdlePriority();

// Whether the calling thread runs at SCHED_IDLE.
bool ThisThreadRunsAtIdlePriority();

}  // namespace pstrain

#endif  // PSTRAIN_CORE_THREAD_PRIORITY_H_
