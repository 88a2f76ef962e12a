// --intra_op_threads: the threads of a task's computation, for the worker,
// the chief and the evaluator; --eval_priority: the priority of the chief's
// and the evaluator's evaluation (see cpu_share.h for the defaults).
#ifndef PSTRAIN_CLUSTER_CPU_SHARE_FLAGS_H_
#define PSTRAIN_CLUSTER_CPU_SHARE_FLAGS_H_

#include <gflags/gflags.h>

#include "cluster/cluster_spec.h"

DECLARE_int32(intra_op_threads);
DECLARE_string(eval_priority);

namespace pstrain {
namespace cluster {

// The compute threads for `config`'s task from --intra_op_threads,
// OMP_NUM_THREADS and this process's CPU budget; logs the choice and where
// it came from ("worker:0 computes on 1 thread: ..."). A negative flag or
// one above 1024 ends the process with exit code 1 and one line.
int ComputeThreadsFromFlagsOrDie(const ClusterConfig& config);

// Whether the task evaluates at idle priority, from --eval_priority (auto:
// ChooseEvaluationPriority); logged ("chief:0 evaluates at idle priority:
// ..."). Another flag value ends the process with exit code 1 and one line.
bool EvaluateAtIdlePriorityFromFlagsOrDie(const ClusterConfig& config);

}  // namespace cluster
}  // namespace pstrain

#endif  // PSTRAIN_CLUSTER_CPU_SHARE_FLAGS_H_
