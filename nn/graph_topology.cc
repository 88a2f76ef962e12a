#include "nn/graph_topology.h"

#include <algorithm>
#include <map>
#include <set>

namespace pstrain {
namespace nn {
namespace {

std::string Join(const std::vector<std::string>& names, const std::string& between) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : between) + name;
  return out;
}

// A cycle among the layers not yet ordered (each reads another of them), in
// the direction the data flows: "a -> b -> a".
std::string FindCycle(const std::vector<const proto::LayerSpec*>& layers,
                      const std::vector<std::vector<LayerSource>>& reads,
                      const std::vector<bool>& ordered) {
  int at = static_cast<int>(std::find(ordered.begin(), ordered.end(), false) - ordered.begin());
  std::vector<int> walk;  // each reads the next
  std::vector<int> seen_at(layers.size(), -1);
  while (seen_at[at] < 0) {
    seen_at[at] = static_cast<int>(walk.size());
    walk.push_back(at);
    for (const LayerSource& s : reads[at]) {
      if (s.kind == LayerSource::kLayer && !ordered[s.index]) {
        at = s.index;
        break;
      }
    }
  }
  // The loop in the direction the data flows, from its earliest layer.
  std::vector<int> loop(walk.rbegin(), walk.rend() - seen_at[at]);
  std::rotate(loop.begin(), std::min_element(loop.begin(), loop.end()), loop.end());
  std::vector<std::string> names;
  for (int i : loop) names.push_back(layers[i]->name());
  names.push_back(names.front());
  return Join(names, " -> ");
}

}  // namespace

StatusOr<GraphTopology> WireLayers(const std::vector<const proto::LayerSpec*>& layers,
                                   const std::vector<std::string>& parts) {
  const int n = static_cast<int>(layers.size());
  std::map<std::string, int> layer_named, part_named;
  for (int i = 0; i < n; ++i) {
    if (!layer_named.emplace(layers[i]->name(), i).second) {
      return InvalidArgument("two layers are named " + layers[i]->name());
    }
  }
  for (size_t p = 0; p < parts.size(); ++p) {
    if (layer_named.count(parts[p]) > 0) return InvalidArgument("two layers are named " + parts[p]);
    part_named.emplace(parts[p], static_cast<int>(p));
  }
  // What each reads, by place in the spec.
  std::vector<std::vector<LayerSource>> reads(n);
  std::vector<int> waiting(n, 0);  // inputs of layers not yet ordered
  std::vector<std::vector<int>> read_by(n);
  for (int i = 0; i < n; ++i) {
    if (layers[i]->inputs().empty()) {
      reads[i].push_back(i == 0 ? LayerSource{LayerSource::kInput, 0}
                                : LayerSource{LayerSource::kLayer, i - 1});
    }
    for (const std::string& name : layers[i]->inputs()) {
      if (auto l = layer_named.find(name); l != layer_named.end()) {
        reads[i].push_back({LayerSource::kLayer, l->second});
      } else if (auto p = part_named.find(name); p != part_named.end()) {
        reads[i].push_back({LayerSource::kPart, p->second});
      } else if (name == "input") {
        reads[i].push_back({LayerSource::kInput, 0});
      } else {
        return InvalidArgument("layer " + layers[i]->name() + " reads " + name +
                               ", which is no layer" + (parts.empty() ? "" : ", no part") +
                               " of the network and not \"input\"");
      }
    }
    for (const LayerSource& s : reads[i]) {
      if (s.kind != LayerSource::kLayer) continue;
      ++waiting[i];
      read_by[s.index].push_back(i);
    }
  }
  std::vector<std::string> unread;
  for (int i = 0; i < n; ++i) {
    if (read_by[i].empty()) unread.push_back(layers[i]->name());
  }
  // Kahn's order, the earliest ready layer of the spec first.
  GraphTopology t;
  std::set<int> ready;
  for (int i = 0; i < n; ++i) {
    if (waiting[i] == 0) ready.insert(i);
  }
  std::vector<bool> ordered(n, false);
  while (!ready.empty()) {
    const int i = *ready.begin();
    ready.erase(ready.begin());
    ordered[i] = true;
    t.order.push_back(i);
    for (int reader : read_by[i]) {
      if (--waiting[reader] == 0) ready.insert(reader);
    }
  }
  if (static_cast<int>(t.order.size()) < n) {
    return InvalidArgument("layers " + FindCycle(layers, reads, ordered) +
                           " form a cycle: each reads the output of the one before it");
  }
  if (unread.size() > 1) {
    return InvalidArgument("layers " + Join(unread, ", ") +
                           " are read by no layer: a network has one output, its logits");
  }
  std::vector<int> place(n);
  for (int p = 0; p < n; ++p) place[t.order[p]] = p;
  t.readers.assign(n, 0);
  for (int p = 0; p < n; ++p) {
    std::vector<LayerSource> in = reads[t.order[p]];
    for (LayerSource& s : in) {
      if (s.kind != LayerSource::kLayer) continue;
      s.index = place[s.index];
      ++t.readers[s.index];
    }
    const LayerSource before =
        p == 0 ? LayerSource{LayerSource::kInput, 0} : LayerSource{LayerSource::kLayer, p - 1};
    t.chain = t.chain && in.size() == 1 && in[0] == before;
    t.inputs.push_back(std::move(in));
  }
  return t;
}

}  // namespace nn
}  // namespace pstrain
