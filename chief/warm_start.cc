#include "chief/warm_start.h"

#include <regex>
#include <sstream>

#include "chief/tf_bundle.h"

namespace pstrain {

StatusOr<std::map<std::string, Tensor>> WarmStartValues(
    const std::vector<nn::VariableSpec>& variables, const WarmStartOptions& options) {
  const std::string from = "--warm_start_from=" + options.prefix;
  std::map<std::string, std::string> tf_names;  // pstrain name -> TF name
  std::stringstream entries(options.map);
  for (std::string entry; std::getline(entries, entry, ',');) {
    const size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == entry.size()) {
      return InvalidArgument("--warm_start_map: '" + entry + "' is not tf_name=pstrain_name");
    }
    const std::string pstrain_name = entry.substr(eq + 1);
    bool known = false;
    for (const nn::VariableSpec& v : variables) known |= v.name == pstrain_name;
    if (!known) {
      return InvalidArgument("--warm_start_map: the model has no variable " + pstrain_name);
    }
    tf_names[pstrain_name] = entry.substr(0, eq);
  }
  std::regex vars;
  try {
    vars = std::regex(options.vars);
  } catch (const std::regex_error& e) {
    return InvalidArgument("--warm_start_vars: '" + options.vars + "' is not a regex: " + e.what());
  }
  PS_ASSIGN_OR_RETURN(const auto bundle, ReadTfBundle(options.prefix));
  std::map<std::string, Tensor> values;
  for (const nn::VariableSpec& v : variables) {
    if (!std::regex_match(v.name, vars)) continue;
    auto mapped = tf_names.find(v.name);
    const std::string tf_name = mapped == tf_names.end() ? v.name : mapped->second;
    const std::string what =
        "variable " + v.name + (tf_name == v.name ? "" : " (" + tf_name + " in the checkpoint)");
    auto it = bundle.find(tf_name);
    if (it == bundle.end()) return InvalidArgument(from + ": no " + what);
    if (it->second.dtype != tensorflow::DT_FLOAT) {
      return InvalidArgument(from + ": " + what + " is " +
                             tensorflow::DataType_Name(it->second.dtype) + ", not float32");
    }
    if (it->second.shape != v.shape) {
      return InvalidArgument(from + ": " + what + " has shape " + ShapeString(it->second.shape) +
                             ", the model's " + ShapeString(v.shape));
    }
    values[v.name] = it->second.floats;
  }
  if (values.empty()) {
    return InvalidArgument("--warm_start_vars: '" + options.vars + "' matches no variable");
  }
  return values;
}

}  // namespace pstrain
