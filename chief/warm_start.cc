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

// A TF 2 checkpoint (tf.train.Checkpoint, Keras's save_weights) keys its
// tensors by object path ("model/_operations/1/_kernel/.ATTRIBUTES/
// VARIABLE_VALUE"); its object graph gives each variable's name when saved
// ("conv2d/kernel"). Saved name -> tensor key; empty for a bundle keyed by
// the names themselves (tf.compat.v1.train.Saver's, pstrain's).
StatusOr<std::map<std::string, std::string>> SavedNames(const std::string& prefix) {
  const std::string kGraph = "_CHECKPOINTABLE_OBJECT_GRAPH";
  PS_ASSIGN_OR_RETURN(const auto bundle, ReadTfBundle(prefix, [&kGraph](const std::string& name) {
                        return name != kGraph;
                      }));
  std::map<std::string, std::string> keys;
  auto it = bundle.find(kGraph);
  if (it == bundle.end()) return keys;
  tensorflow::TrackableObjectGraph graph;
  if (it->second.strings.size() != 1 || !graph.ParseFromString(it->second.strings[0])) {
    return DataLoss("--warm_start_from=" + prefix + ": " + kGraph + " is not an object graph");
  }
  for (const auto& node : graph.nodes()) {
    for (const auto& attribute : node.attributes()) {
      if (attribute.name() == "VARIABLE_VALUE") {
        keys[attribute.full_name()] = attribute.checkpoint_key();
      }
    }
  }
  return keys;
}

// The key of the tensor saved as `name`: itself in a bundle keyed by names;
// in a TF 2 one, the variable saved under that name, or under one scope
// above it (a Keras Sequential saves "sequential/dense/kernel" for its
// "dense/kernel") when exactly one is.
std::string KeyOf(const std::string& name, const std::map<std::string, std::string>& saved) {
  if (saved.empty()) return name;
  auto it = saved.find(name);
  if (it != saved.end()) return it->second;
  std::string found;
  int matches = 0;
  for (const auto& [full_name, key] : saved) {
    const size_t slash = full_name.find('/');
    if (slash != std::string::npos && full_name.compare(slash + 1, std::string::npos, name) == 0) {
      found = key;
      ++matches;
    }
  }
  return matches == 1 ? found : name;
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
  PS_ASSIGN_OR_RETURN(const auto saved, SavedNames(options.prefix));
  std::set<std::string> tf_wanted;
  for (const Wanted& w : wanted) tf_wanted.insert(KeyOf(w.tf_name, saved));
  // Only the wanted tensors are read (not an embedding table's keys and values).
  PS_ASSIGN_OR_RETURN(const auto bundle,
                      ReadTfBundle(options.prefix, [&tf_wanted](const std::string& name) {
                        return tf_wanted.count(name) == 0;
                      }));
  std::map<std::string, Tensor> values;
  for (const Wanted& w : wanted) {
    const std::string what = w.kind + " " + w.name +
                             (w.tf_name == w.name ? "" : " (" + w.tf_name + " in the checkpoint)");
    auto it = bundle.find(KeyOf(w.tf_name, saved));
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
