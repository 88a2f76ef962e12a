#include "cluster/cluster_flags.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "core/task_main.h"

DEFINE_string(cluster_spec, "",
              "Path of a JSON cluster spec {\"chief\":[...],\"ps\":[...],\"worker\":[...]}. "
              "If empty, the TF_CONFIG environment variable is used.");
DEFINE_string(job, "", "This task's job (chief, ps, worker, evaluator); overrides TF_CONFIG.");
DEFINE_int32(task, -1, "This task's index within its job; overrides TF_CONFIG if >= 0.");

namespace pstrain {
namespace cluster {
namespace {

[[noreturn]] void DieWithConfigError(const std::string& message) {
  // glibc's basename of argv[0]; set before main, unlike gflags' copy.
  std::fprintf(stderr, "%s: invalid cluster spec: %s\n", program_invocation_short_name,
               message.c_str());
  std::exit(kExitBadSpec);
}

}  // namespace

ClusterConfig ClusterConfigFromFlagsOrDie(const std::string& expected_job) {
  StatusOr<ClusterConfig> config =
      ResolveClusterConfig(FLAGS_cluster_spec, std::getenv("TF_CONFIG"), FLAGS_job, FLAGS_task);
  if (!config.ok()) DieWithConfigError(config.status().message());
  if (!expected_job.empty() && config->task.job != expected_job) {
    DieWithConfigError("this program runs a " + expected_job + " task, but the task is " +
                       config->task.ToString());
  }
  return std::move(config).value();
}

}  // namespace cluster
}  // namespace pstrain
