#include "chief/tf_names.h"

#include <map>
#include <set>
#include <string>

#include "ps/optimizer.h"

namespace pstrain {

TfNameFn TfCheckpointNames(const std::vector<nn::VariableSpec>& variables,
                           const proto::OptimizerConfig& optimizer) {
  auto created = Optimizer::Create(optimizer);
  if (!created.ok()) return nullptr;
  const std::vector<std::string> slots = (*created)->slot_names();
  // The place of each slot in TF's order of creation: pstrain keeps
  // centered RMSProp's mean gradient last, TF makes it before the momentum.
  std::map<std::string, std::string> suffix;
  for (size_t i = 0; i < slots.size(); ++i) {
    size_t k = i;
    if (optimizer.name() == "RMSProp" && slots.size() == 3) k = i == 0 ? 0 : 3 - i;
    suffix[slots[i]] = optimizer.name() + (k == 0 ? "" : "_" + std::to_string(k));
  }
  std::set<std::string> names;
  for (const nn::VariableSpec& v : variables) names.insert(v.name);
  return [names = std::move(names), suffix = std::move(suffix)](const std::string& name) {
    const size_t slash = name.rfind('/');
    if (slash == std::string::npos || names.count(name.substr(0, slash)) == 0) return name;
    auto it = suffix.find(name.substr(slash + 1));
    return it == suffix.end() ? name : name.substr(0, slash + 1) + it->second;
  };
}

}  // namespace pstrain
