// Helpers shared by cluster_spec.cc and cluster_config.cc; not a public API.
// All are pure and thread-safe.
#ifndef PSTRAIN_CLUSTER_CLUSTER_SPEC_INTERNAL_H_
#define PSTRAIN_CLUSTER_CLUSTER_SPEC_INTERNAL_H_

#include <nlohmann/json.hpp>
#include <string>

#include "cluster/cluster_spec.h"
#include "core/status.h"

namespace pstrain {
namespace cluster {

// Parses `text`; malformed input is InvalidArgument
// "invalid JSON: parse error at line L, column C: ..." (the parser's position).
StatusOr<nlohmann::json> ParseJson(const std::string& text);

// "chief", "ps", "worker", "evaluator" as is; "master" -> "chief"; anything
// else is InvalidArgument.
StatusOr<std::string> CanonicalJobName(const std::string& name);

// Builds and validates a spec from a parsed {"ps":[...],...} object.
StatusOr<ClusterSpec> ClusterSpecFromJson(const nlohmann::json& json);

}  // namespace cluster
}  // namespace pstrain

#endif  // PSTRAIN_CLUSTER_CLUSTER_SPEC_INTERNAL_H_
