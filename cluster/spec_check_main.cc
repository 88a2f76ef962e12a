// cluster_spec_check: resolves the cluster config as every pstrain binary does
// (--cluster_spec / TF_CONFIG, --job, --task) and prints this task and the
// cluster. Exits 2 with a one-line message if the config is invalid.
#include <cstdio>

#include "cluster/cluster_flags.h"
#include "core/task_main.h"

int main(int argc, char** argv) {
  pstrain::InitToolMain(
      "checks a cluster spec and prints the resolved task.\n"
      "  cluster_spec_check --cluster_spec=cluster.json --job=worker --task=1\n"
      "or, with no cluster flags, from TF_CONFIG.",
      &argc, &argv);
  const pstrain::cluster::ClusterConfig config = pstrain::cluster::ClusterConfigFromFlagsOrDie("");
  std::printf("task %s\n", config.task.ToString().c_str());
  for (const auto& [job, addresses] : config.spec.jobs) {
    for (size_t i = 0; i < addresses.size(); ++i) {
      std::printf("%s:%zu %s\n", job.c_str(), i, addresses[i].c_str());
    }
  }
  return 0;
}
