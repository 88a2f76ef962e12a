#include "cluster/placement.h"

#include <algorithm>
#include <numeric>
#include <set>

#include "core/fnv1a.h"

namespace pstrain {
namespace cluster {
namespace {

int64_t BytesOf(const Shape& shape, int num_slots) {
  return 4 * NumElements(shape) * (1 + static_cast<int64_t>(num_slots));
}

Status ValidateVariables(const std::vector<VariableInfo>& vars) {
  std::set<std::string> names;
  for (const VariableInfo& var : vars) {
    if (var.name.empty()) return InvalidArgument("a variable has an empty name");
    if (!names.insert(var.name).second) {
      return InvalidArgument("duplicate variable name " + var.name);
    }
    for (int64_t dim : var.shape) {
      if (dim <= 0) {
        return InvalidArgument("variable " + var.name + " has shape " + ShapeString(var.shape) +
                               "; every dimension must be positive");
      }
    }
    if (var.num_slots < 0) {
      return InvalidArgument("variable " + var.name + " has negative num_slots " +
                             std::to_string(var.num_slots));
    }
  }
  return OkStatus();
}

// Appends the shards of `var`, with ps left at 0.
void AppendShards(const VariableInfo& var, int num_ps, int64_t min_slice_bytes,
                  std::vector<Shard>* shards) {
  const int64_t bytes = BytesOf(var.shape, var.num_slots);
  int64_t parts = 1;
  if (!var.shape.empty() && bytes > min_slice_bytes) {
    const int64_t wanted = (bytes + min_slice_bytes - 1) / min_slice_bytes;
    parts = std::min({static_cast<int64_t>(num_ps), var.shape[0], wanted});
  }
  const int64_t rows = var.shape.empty() ? 0 : var.shape[0];
  int64_t row = 0;
  for (int64_t k = 0; k < parts; ++k) {
    Shard shard;
    shard.variable = var.name;
    shard.name = parts == 1 ? var.name : var.name + "/part_" + std::to_string(k);
    shard.part = static_cast<int>(k);
    shard.num_parts = static_cast<int>(parts);
    shard.shape = var.shape;
    if (!var.shape.empty()) {
      const int64_t n = rows / parts + (k < rows % parts ? 1 : 0);
      shard.row_begin = row;
      shard.row_end = row + n;
      shard.shape[0] = n;
      row += n;
    }
    shard.bytes = BytesOf(shard.shape, var.num_slots);
    shards->push_back(std::move(shard));
  }
}

void AssignGreedy(std::vector<Shard>* shards, std::vector<int64_t>* bytes_per_ps) {
  std::vector<size_t> order(shards->size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [shards](size_t a, size_t b) {
    const Shard& x = (*shards)[a];
    const Shard& y = (*shards)[b];
    return x.bytes != y.bytes ? x.bytes > y.bytes : x.name < y.name;
  });
  for (size_t i : order) {
    // min_element returns the first minimum: the lowest index on ties.
    auto least = std::min_element(bytes_per_ps->begin(), bytes_per_ps->end());
    (*shards)[i].ps = static_cast<int>(least - bytes_per_ps->begin());
    *least += (*shards)[i].bytes;
  }
}

void AssignRoundRobin(std::vector<Shard>* shards, std::vector<int64_t>* bytes_per_ps) {
  const size_t num_ps = bytes_per_ps->size();
  for (size_t i = 0; i < shards->size(); ++i) {
    (*shards)[i].ps = static_cast<int>(i % num_ps);
    (*bytes_per_ps)[i % num_ps] += (*shards)[i].bytes;
  }
}

// One line per shard, "name shape rows ps", after "num_ps=N".
std::string CanonicalText(const Placement& placement) {
  std::string text = "num_ps=" + std::to_string(placement.num_ps) + "\n";
  for (const Shard& s : placement.shards) {
    text += s.name + " " + ShapeString(s.shape) + " " + std::to_string(s.row_begin) + ":" +
            std::to_string(s.row_end) + " " + std::to_string(s.ps) + "\n";
  }
  return text;
}

}  // namespace

StatusOr<PlacementStrategy> ParsePlacementStrategy(const std::string& name) {
  if (name == "greedy") return PlacementStrategy::kGreedy;
  if (name == "round_robin") return PlacementStrategy::kRoundRobin;
  return InvalidArgument("unknown placement strategy \"" + name +
                         "\"; expected greedy or round_robin");
}

std::vector<const Shard*> Placement::ShardsOfVariable(const std::string& variable) const {
  std::vector<const Shard*> result;
  for (const Shard& shard : shards) {
    if (shard.variable == variable) result.push_back(&shard);
  }
  return result;
}

std::vector<const Shard*> Placement::ShardsOnPs(int ps) const {
  std::vector<const Shard*> result;
  for (const Shard& shard : shards) {
    if (shard.ps == ps) result.push_back(&shard);
  }
  return result;
}

StatusOr<Placement> ComputePlacement(const std::vector<VariableInfo>& vars, int num_ps,
                                     PlacementStrategy strategy, int64_t min_slice_bytes) {
  if (num_ps < 1) {
    return InvalidArgument("placement needs at least one ps task, got num_ps=" +
                           std::to_string(num_ps));
  }
  if (min_slice_bytes < 1) {
    return InvalidArgument("min_slice_bytes must be positive, got " +
                           std::to_string(min_slice_bytes));
  }
  PS_RETURN_IF_ERROR(ValidateVariables(vars));
  Placement placement;
  placement.num_ps = num_ps;
  placement.bytes_per_ps.assign(num_ps, 0);
  for (const VariableInfo& var : vars) {
    AppendShards(var, num_ps, min_slice_bytes, &placement.shards);
  }
  if (strategy == PlacementStrategy::kGreedy) {
    AssignGreedy(&placement.shards, &placement.bytes_per_ps);
  } else {
    AssignRoundRobin(&placement.shards, &placement.bytes_per_ps);
  }
  placement.fingerprint = Fnv1a64(CanonicalText(placement));
  return placement;
}

}  // namespace cluster
}  // namespace pstrain
#include "core/fnv1a.h"
