#include "chief/warm_start.h"

#include <regex>
#include <set>
#include <sstream>

#include "chief/tf_bundle.h"

namespace pstrain {

namespace {

// --warm_start_map's tf_name=pstrain_name entries: pstrain name -> TF name.
StatusOr<std::map<std::string, std::string>> ParseWarmStartMap(
    const std::string& map, const std::vector<nn::VariableSpec>& variables) {
  std::map<std::string, std::string> tf_names;
  std::stringstream entries(map);
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
  return tf_names;
}

}  // namespace

StatusOr<std::map<std::string, Tensor>> WarmStartValues(
    const std::vector<nn::VariableSpec>& variables, const WarmStartOptions& options) {
  const std::string from = "--warm_start_from=" + options.prefix;
  PS_ASSIGN_OR_RETURN(const auto tf_names, ParseWarmStartMap(options.map, variables));
  std::regex vars;
  try {
    vars = std::regex(options.vars);
  } catch (const std::regex_error& e) {
    return InvalidArgument("--warm_start_vars: '" + options.vars + "' is not a regex: " + e.what());
  }
  // Each tensor to take: a variable, or one of its slots, from the
  // checkpoint's tensor of that TF name, of the variable's shape.
  struct Wanted {
    std::string name, tf_name, kind;
    Shape shape;
  };
  std::vector<Wanted> wanted;
  for (const nn::VariableSpec& v : variables) {
    if (!std::regex_match(v.name, vars)) continue;
    auto mapped = tf_names.find(v.name);
    const std::string tf_name = mapped == tf_names.end() ? v.name : mapped->second;
    wanted.push_back({v.name, tf_name, "variable", v.shape});
    if (!options.slots || !v.trainable) continue;
    std::vector<std::string> extras = options.slot_names;
    if (options.moving_average) extras.push_back("ExponentialMovingAverage");
    for (const std::string& slot : extras) {
      // The slot's TF name, under the variable's TF name.
      const std::string own = v.name + "/" + slot;
      const std::string tf_own = options.tf_name ? options.tf_name(own) : own;
      wanted.push_back({own, tf_name + tf_own.substr(v.name.size()), "slot", v.shape});
    }
  }
  if (wanted.empty()) {
    return InvalidArgument("--warm_start_vars: '" + options.vars + "' matches no variable");
  }
  std::set<std::string> tf_wanted;
  for (const Wanted& w : wanted) tf_wanted.insert(w.tf_name);
  // Only the wanted tensors are read (not an embedding table's keys and values).
  PS_ASSIGN_OR_RETURN(const auto bundle,
                      ReadTfBundle(options.prefix, [&tf_wanted](const std::string& name) {
                        return tf_wanted.count(name) == 0;
                      }));
  std::map<std::string, Tensor> values;
  for (const Wanted& w : wanted) {
    const std::string what = w.kind + " " + w.name +
                             (w.tf_name == w.name ? "" : " (" + w.tf_name + " in the checkpoint)");
    auto it = bundle.find(w.tf_name);
    if (it == bundle.end()) return InvalidArgument(from + ": no " + what);
    if (it->second.dtype != tensorflow::DT_FLOAT) {
      return InvalidArgument(from + ": " + what + " is " +
                             tensorflow::DataType_Name(it->second.dtype) + ", not float32");
    }
    if (it->second.shape != w.shape) {
      return InvalidArgument(from + ": " + what + " has shape " + ShapeString(it->second.shape) +
                             ", the model's " + ShapeString(w.shape));
    }
    values[w.name] = it->second.floats;
  }
  return values;
}

}  // namespace pstrain
