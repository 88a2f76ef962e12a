// How long OpenMP's idle threads spin before they sleep, for every task.
//
// libgomp's threads spin after each parallel region, waiting for the next
// (GOMP_SPINCOUNT, 300,000 spins by default), before they sleep. In a
// training task that time is not idle: the task's own transfer threads and
// the ps processes on the same CPUs need it. overlap_bench, a worker with
// two compute threads and a ps on two CPUs: 0.0336 s a step spinning,
// 0.0294 s with 1,000 spins, and 10 ms less CPU per step; the step in one
// process is the same either way. libgomp reads its
// environment once, as it loads, so a task that finds neither
// GOMP_SPINCOUNT nor OMP_WAIT_POLICY set runs itself again with
// GOMP_SPINCOUNT=1000 (the same process: exec keeps its pid); a user's own
// setting is kept.
#ifndef PSTRAIN_CORE_OPENMP_SPIN_H_
#define PSTRAIN_CORE_OPENMP_SPIN_H_

#include <string>

namespace pstrain {

constexpr char kOpenMpSpinCount[] = "1000";

// The GOMP_SPINCOUNT to run with, or "" to run as is: "" when either
// variable is set (null: unset).
std::string OpenMpSpinToSet(const char* gomp_spincount, const char* omp_wait_policy);

// Sets GOMP_SPINCOUNT and executes this binary again with `argv` when
// OpenMpSpinToSet says so; returns only when it does not (or the exec
// failed, and the task runs with libgomp's default).
void RunWithOpenMpSpinLimit(char** argv);

}  // namespace pstrain

#endif  // PSTRAIN_CORE_OPENMP_SPIN_H_
