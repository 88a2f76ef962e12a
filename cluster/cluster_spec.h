// ClusterSpec and TF_CONFIG: which tasks make up the cluster and which one this
// process is.
//
// A cluster spec maps a job name ("chief", "ps", "worker", "evaluator") to the
// "host:port" address of each of its tasks, as TensorFlow's tf.train.ClusterSpec
// does. "master" is accepted as an alias of "chief" and stored as "chief".
// Every function here is pure (ResolveClusterConfig reads one file) and
// thread-safe; errors are InvalidArgument with a one-line message that names
// the problem, except an unreadable file (NotFound).
#ifndef PSTRAIN_CLUSTER_CLUSTER_SPEC_H_
#define PSTRAIN_CLUSTER_CLUSTER_SPEC_H_

#include <map>
#include <string>
#include <vector>

#include "core/status.h"

namespace pstrain {
namespace cluster {

struct ClusterSpec {
  // Job name -> task addresses, indexed by task index.
  std::map<std::string, std::vector<std::string>> jobs;

  // Number of tasks of `job`; 0 for a job the spec does not list.
  int NumTasks(const std::string& job) const;
  // Address of task `index` of `job`. The task must exist (CHECKed).
  const std::string& Address(const std::string& job, int index) const;
  // {"chief":["host:port"],"ps":[...],...}: what ParseClusterSpecJson reads,
  // every string escaped as JSON requires. The one writer of cluster specs.
  std::string ToJson() const;
};

// Writes spec.ToJson() to `path` (atomically: core/atomic_file.h).
Status WriteClusterSpec(const ClusterSpec& spec, const std::string& path);

struct TaskId {
  std::string job;
  int index = 0;
  // "worker:1"
  std::string ToString() const;
};

struct ClusterConfig {
  ClusterSpec spec;
  // This process's task. It is listed in `spec`, except an evaluator, which
  // may run outside the cluster (Kubeflow leaves it out of TF_CONFIG's cluster).
  TaskId task;
};

// The host part of an address "host:port", IPv6 brackets removed
// ("[::1]:80" -> "::1"): what a socket connects to or listens on.
std::string AddressHost(const std::string& address);

// OK when `host` (a name or an address) resolves; else Unavailable saying
// that the name does not resolve, and the resolver's reason. A DNS record
// may still come (a Kubernetes service's does), so the caller may wait.
Status CheckHostResolves(const std::string& host);

// Parses and validates {"chief":[...],"ps":[...],"worker":[...]}: known job
// names, addresses "host:port" with port 1..65535 (IPv6 hosts in brackets), no
// address used twice, at least one ps task, at most one chief.
StatusOr<ClusterSpec> ParseClusterSpecJson(const std::string& json_text);

// Resolves this process's cluster and task. If `cluster_spec_path` is
// non-empty the spec is read from that file; otherwise `tf_config` (the value
// of TF_CONFIG; may be null or empty) is parsed as Kubeflow's TFJob sets it:
//   {"cluster":{...},"task":{"type":"worker","index":1},"environment":"cloud"}
// Keys it does not use are ignored. A non-empty `job_flag` overrides
// task.type and a `task_flag` >= 0 overrides task.index (default index 0).
StatusOr<ClusterConfig> ResolveClusterConfig(const std::string& cluster_spec_path,
                                             const char* tf_config, const std::string& job_flag,
                                             int task_flag);

}  // namespace cluster
}  // namespace pstrain

#endif  // PSTRAIN_CLUSTER_CLUSTER_SPEC_H_
