#include "cluster/cpu_share_flags.h"

#include <glog/logging.h>

#include <cstdlib>

#include "cluster/cpu_share.h"
#include "core/task_main.h"

DEFINE_int32(intra_op_threads, 0,
             "Threads for this task's computation (0: the CPUs this process may use, by its "
             "affinity mask and cgroup quota, shared equally among the cluster's workers on "
             "its host; OMP_NUM_THREADS, when set, is used instead)");

DEFINE_string(eval_priority, "auto",
              "Priority of the chief's evaluation while training and of the evaluator: idle "
              "(SCHED_IDLE: only CPU time that training leaves), normal, or auto (idle where the "
              "workers on this host take every usable CPU, else normal)");

namespace pstrain {
namespace cluster {

int ComputeThreadsFromFlagsOrDie(const ClusterConfig& config) {
  if (FLAGS_intra_op_threads < 0 || FLAGS_intra_op_threads > 1024) {
    std::exit(ExitWith(InvalidArgument("--intra_op_threads must be in [0, 1024], got " +
                                       std::to_string(FLAGS_intra_op_threads)),
                       kExitBadInput));
  }
  const ThreadChoice choice = ChooseComputeThreads(
      FLAGS_intra_op_threads, std::getenv("OMP_NUM_THREADS"), ReadCpuBudget(), config);
  LOG(INFO) << config.task.ToString() << " computes on " << choice.threads
            << (choice.threads == 1 ? " thread: " : " threads: ") << choice.why;
  return choice.threads;
}

bool EvaluateAtIdlePriorityFromFlagsOrDie(const ClusterConfig& config) {
  const StatusOr<PriorityChoice> choice =
      ParsePriorityFlag("--eval_priority", FLAGS_eval_priority,
                        [&] { return ChooseEvaluationPriority(ReadCpuBudget(), config); });
  if (!choice.ok()) std::exit(ExitWith(choice.status(), kExitBadInput));
  LOG(INFO) << config.task.ToString() << " evaluates at " << (choice->idle ? "idle" : "normal")
            << " priority: " << choice->why;
  return choice->idle;
}

}  // namespace cluster
}  // namespace pstrain
