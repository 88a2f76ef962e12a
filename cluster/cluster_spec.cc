#include "cluster/cluster_spec.h"

#include <glog/logging.h>

#include <netdb.h>
#include <sys/socket.h>

#include <cctype>
#include <utility>

#include "cluster/cluster_spec_internal.h"
#include "core/atomic_file.h"

namespace pstrain {
namespace cluster {
namespace {

bool IsHostNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
}

bool IsIpv6Char(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.';
}

bool ValidHost(const std::string& host) {
  if (host.empty()) return false;
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return false;
    for (size_t i = 1; i + 1 < host.size(); ++i) {
      if (!IsIpv6Char(host[i])) return false;
    }
    return true;
  }
  for (char c : host) {
    if (!IsHostNameChar(c)) return false;
  }
  return true;
}

Status ValidateAddress(const TaskId& task, const std::string& address) {
  const std::string where = "task " + task.ToString() + ": address \"" + address + "\"";
  size_t colon = address.rfind(':');
  if (colon == std::string::npos || !ValidHost(address.substr(0, colon))) {
    return InvalidArgument(where + " is not host:port");
  }
  const std::string port = address.substr(colon + 1);
  bool digits = !port.empty() && port.size() <= 5;
  for (char c : port) digits = digits && std::isdigit(static_cast<unsigned char>(c));
  if (!digits || std::stoi(port) < 1 || std::stoi(port) > 65535) {
    return InvalidArgument(where + " has port \"" + port + "\"; the port must be 1..65535");
  }
  return OkStatus();
}

Status ValidateSpec(const ClusterSpec& spec) {
  std::map<std::string, TaskId> owner;  // address -> first task using it
  for (const auto& [job, addresses] : spec.jobs) {
    for (size_t i = 0; i < addresses.size(); ++i) {
      TaskId task{job, static_cast<int>(i)};
      PS_RETURN_IF_ERROR(ValidateAddress(task, addresses[i]));
      auto [it, inserted] = owner.emplace(addresses[i], task);
      if (!inserted) {
        return InvalidArgument("duplicate address " + addresses[i] + " used by " +
                               it->second.ToString() + " and " + task.ToString());
      }
    }
  }
  if (spec.NumTasks("ps") == 0) return InvalidArgument("cluster spec has no ps task");
  if (spec.NumTasks("chief") > 1) {
    return InvalidArgument("cluster spec has " + std::to_string(spec.NumTasks("chief")) +
                           " chief tasks; at most one is allowed");
  }
  return OkStatus();
}

}  // namespace

std::string AddressHost(const std::string& address) {
  std::string host = address.substr(0, address.rfind(':'));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return host;
}

Status CheckHostResolves(const std::string& host) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (found != nullptr) ::freeaddrinfo(found);
  if (rc == 0) return OkStatus();
  return Unavailable("the host name " + host + " does not resolve (" + ::gai_strerror(rc) + ")");
}

StatusOr<nlohmann::json> ParseJson(const std::string& text) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // Syntax errors, and numbers out of range (out_of_range.406). what() is
    // "[json.exception.parse_error.101] parse error at line 1, ...".
    std::string what = e.what();
    size_t bracket = what.find("] ");
    if (bracket != std::string::npos) what = what.substr(bracket + 2);
    return InvalidArgument("invalid JSON: " + what);
  }
}

StatusOr<std::string> CanonicalJobName(const std::string& name) {
  if (name == "master") return std::string("chief");
  if (name == "chief" || name == "ps" || name == "worker" || name == "evaluator") return name;
  return InvalidArgument("unknown job name \"" + name +
                         "\"; expected chief (or master), ps, worker or evaluator");
}

std::string ClusterSpec::ToJson() const {
  nlohmann::json json = nlohmann::json::object();
  for (const auto& [job, addresses] : jobs) json[job] = addresses;
  return json.dump();
}

Status WriteClusterSpec(const ClusterSpec& spec, const std::string& path) {
  return WriteFileAtomically(path, spec.ToJson() + "\n");
}

int ClusterSpec::NumTasks(const std::string& job) const {
  auto it = jobs.find(job);
  return it == jobs.end() ? 0 : static_cast<int>(it->second.size());
}

const std::string& ClusterSpec::Address(const std::string& job, int index) const {
  CHECK(index >= 0 && index < NumTasks(job)) << "no task " << job << ":" << index;
  return jobs.at(job)[index];
}

std::string TaskId::ToString() const { return job + ":" + std::to_string(index); }

StatusOr<ClusterSpec> ClusterSpecFromJson(const nlohmann::json& json) {
  if (!json.is_object()) {
    return InvalidArgument(
        std::string("cluster spec must be a JSON object of job -> addresses, got ") +
        json.type_name());
  }
  ClusterSpec spec;
  for (const auto& [name, tasks] : json.items()) {
    PS_ASSIGN_OR_RETURN(std::string job, CanonicalJobName(name));
    if (spec.jobs.count(job) > 0) {
      return InvalidArgument("job " + job + " is listed twice (master is an alias of chief)");
    }
    const std::string expected = "job " + name + " must be a list of \"host:port\" strings";
    if (!tasks.is_array()) return InvalidArgument(expected + ", got " + tasks.type_name());
    std::vector<std::string>& addresses = spec.jobs[job];
    for (const auto& task : tasks) {
      if (!task.is_string()) {
        return InvalidArgument(expected + ", got a " + task.type_name() + " element");
      }
      addresses.push_back(task.get<std::string>());
    }
  }
  PS_RETURN_IF_ERROR(ValidateSpec(spec));
  return spec;
}

StatusOr<ClusterSpec> ParseClusterSpecJson(const std::string& json_text) {
  PS_ASSIGN_OR_RETURN(nlohmann::json json, ParseJson(json_text));
  return ClusterSpecFromJson(json);
}

}  // namespace cluster
}  // namespace pstrain
