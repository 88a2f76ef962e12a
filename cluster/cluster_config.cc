// ResolveClusterConfig: the cluster spec from a file or TF_CONFIG, and this
// process's task from TF_CONFIG's "task" and the --job/--task overrides.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>

#include "cluster/cluster_spec.h"
#include "cluster/cluster_spec_internal.h"

namespace pstrain {
namespace cluster {
namespace {

StatusOr<std::string> ReadFile(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  auto unreadable = [&path]() {
    return NotFound("cannot read cluster spec file " + path + ": " + std::strerror(errno));
  };
  if (file == nullptr) return unreadable();
  std::string text;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file.get())) > 0) text.append(buffer, n);
  if (std::ferror(file.get())) return unreadable();
  return text;
}

// Reads TF_CONFIG's optional "task":{"type":...,"index":...} into `task`,
// leaving fields it does not set untouched.
Status ReadTfConfigTask(const nlohmann::json& config, TaskId* task) {
  auto it = config.find("task");
  if (it == config.end() || it->is_null()) return OkStatus();
  if (!it->is_object()) {
    return InvalidArgument(std::string("\"task\" must be an object, got ") + it->type_name());
  }
  auto type = it->find("type");
  if (type != it->end()) {
    if (!type->is_string()) {
      return InvalidArgument(std::string("task.type must be a string, got ") + type->type_name());
    }
    task->job = type->get<std::string>();
  }
  auto index = it->find("index");
  if (index != it->end()) {
    if (!index->is_number_integer()) {
      return InvalidArgument(std::string("task.index must be an integer, got ") +
                             index->type_name());
    }
    const int64_t value = index->get<int64_t>();
    if (value < 0 || value > std::numeric_limits<int>::max()) {
      return InvalidArgument("task index " + std::to_string(value) + " out of range");
    }
    task->index = static_cast<int>(value);
  }
  return OkStatus();
}

StatusOr<ClusterConfig> ParseTfConfig(const std::string& text) {
  PS_ASSIGN_OR_RETURN(nlohmann::json config, ParseJson(text));
  if (!config.is_object()) {
    return InvalidArgument(std::string("must be a JSON object, got ") + config.type_name());
  }
  auto cluster = config.find("cluster");
  if (cluster == config.end()) return InvalidArgument("has no \"cluster\" key");
  ClusterConfig result;
  PS_ASSIGN_OR_RETURN(result.spec, ClusterSpecFromJson(*cluster));
  PS_RETURN_IF_ERROR(ReadTfConfigTask(config, &result.task));
  return result;
}

Status ValidateTask(const ClusterSpec& spec, TaskId* task) {
  if (task->job.empty()) {
    return InvalidArgument("missing task type: pass --job or set task.type in TF_CONFIG");
  }
  PS_ASSIGN_OR_RETURN(task->job, CanonicalJobName(task->job));
  const int n = spec.NumTasks(task->job);
  // Kubeflow leaves the evaluator out of the cluster: it runs beside it.
  if (n == 0 && task->job == "evaluator" && task->index >= 0) return OkStatus();
  if (task->index < 0 || task->index >= n) {
    if (n == 0) {
      return InvalidArgument("task index " + std::to_string(task->index) + " out of range: job " +
                             task->job + " has no tasks in the cluster spec");
    }
    return InvalidArgument("task index " + std::to_string(task->index) + " out of range for job " +
                           task->job + ": expected 0.." + std::to_string(n - 1));
  }
  return OkStatus();
}

}  // namespace

StatusOr<ClusterConfig> ResolveClusterConfig(const std::string& cluster_spec_path,
                                             const char* tf_config, const std::string& job_flag,
                                             int task_flag) {
  ClusterConfig config;
  if (!cluster_spec_path.empty()) {
    PS_ASSIGN_OR_RETURN(std::string text, ReadFile(cluster_spec_path));
    StatusOr<ClusterSpec> spec = ParseClusterSpecJson(text);
    if (!spec.ok()) return spec.status().Annotate(cluster_spec_path);
    config.spec = std::move(spec).value();
  } else if (tf_config != nullptr && tf_config[0] != '\0') {
    StatusOr<ClusterConfig> parsed = ParseTfConfig(tf_config);
    if (!parsed.ok()) return parsed.status().Annotate("TF_CONFIG");
    config = std::move(parsed).value();
  } else {
    return InvalidArgument("no cluster spec: pass --cluster_spec=FILE or set TF_CONFIG");
  }
  if (!job_flag.empty()) config.task.job = job_flag;
  if (task_flag >= 0) config.task.index = task_flag;
  PS_RETURN_IF_ERROR(ValidateTask(config.spec, &config.task));
  return config;
}

}  // namespace cluster
}  // namespace pstrain
