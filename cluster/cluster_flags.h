// Command-line flags that say which cluster this process belongs to and which
// task it is: --cluster_spec (a JSON file), --job and --task. Without
// --cluster_spec the TF_CONFIG environment variable is used (see
// ResolveClusterConfig). Call from main only, after gflags has parsed argv.
#ifndef PSTRAIN_CLUSTER_CLUSTER_FLAGS_H_
#define PSTRAIN_CLUSTER_CLUSTER_FLAGS_H_

#include <gflags/gflags.h>

#include <string>

#include "cluster/cluster_spec.h"

DECLARE_string(cluster_spec);
DECLARE_string(job);
DECLARE_int32(task);

namespace pstrain {
namespace cluster {

// Resolves the cluster config from the flags and getenv("TF_CONFIG"). On any
// error, or if `expected_job` is non-empty and the task's job differs from it,
// prints one line "<program>: invalid cluster spec: <message>" to stderr and
// exits with code 2 (a configuration error: retrying will not help).
ClusterConfig ClusterConfigFromFlagsOrDie(const std::string& expected_job);

}  // namespace cluster
}  // namespace pstrain

#endif  // PSTRAIN_CLUSTER_CLUSTER_FLAGS_H_
