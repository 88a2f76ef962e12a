// How long OpenMP's idle threads spin before they sleep, for every task.
//
// libgomp's threads spin after each parallel region, waiting for the next
// (GOMP_SPINCOUNT, 300,000 spins by default), before they sleep. In a
// training task much of that time is not idle: the task's own transfer
// threads and the ps processes on the same CPUs need it while the worker
// waits for a pull or a push. But a thread that sleeps between the parallel
// regions of one step gives its CPU away (to the ps, to the chief's
// evaluation at idle priority) and must take it back, caches cold, at the
// next region. 30,000 spins (0.6 ms on a 2-core Xeon, a pause taking 20 ns)
// cover the gaps inside a step and end within a transfer's wait. The main
// job on 2 CPUs (1 worker, 2 ps, the chief evaluating every 10 s), taking
// turns: the worker's step 0.0587 and 0.0579 s with 30,000 spins against
// 0.0635 and 0.0676 s with 1,000; without the evaluation, 0.0626 and 0.0528
// against 0.0653 and 0.0596. (With the default 300,000, overlap_bench's
// overlapped step took 0.0336 s against 0.0294 s with 1,000.) libgomp reads
// its environment once, as it loads, so a task that finds neither
// GOMP_SPINCOUNT nor OMP_WAIT_POLICY set runs itself again with
// GOMP_SPINCOUNT=30000 (the same process: exec keeps its pid); a user's own
// setting is kept.
#ifndef PSTRAIN_CORE_OPENMP_SPIN_H_
#define PSTRAIN_CORE_OPENMP_SPIN_H_

#include <string>

namespace pstrain {

constexpr char kOpenMpSpinCount[] = "30000";

// The GOMP_SPINCOUNT to run with, or "" to run as is: "" when either
// variable is set (null: unset).
std::string OpenMpSpinToSet(const char* gomp_spincount, const char* omp_wait_policy);

// Sets GOMP_SPINCOUNT and executes this binary again with `argv` when
// OpenMpSpinToSet says so; returns only when it does not (or the exec
// failed, and the task runs with libgomp's default).
void RunWithOpenMpSpinLimit(char** argv);

}  // namespace pstrain

#endif  // PSTRAIN_CORE_OPENMP_SPIN_H_
