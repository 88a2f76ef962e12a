// The wiring of a network's layers (proto/model.proto's LayerSpec.inputs):
// what each layer reads and an order to run them in, or why they do not
// make a network.
#ifndef PSTRAIN_NN_GRAPH_TOPOLOGY_H_
#define PSTRAIN_NN_GRAPH_TOPOLOGY_H_

#include <string>
#include <vector>

#include "core/status.h"
#include "proto/model.pb.h"

namespace pstrain {
namespace nn {

// What a layer reads: the model's input, a named part of it, or the output
// of the layer at that place in the run order.
struct LayerSource {
  enum Kind { kInput, kPart, kLayer };
  Kind kind;
  int index;  // kPart: among the parts; kLayer: in the run order
  bool operator==(const LayerSource& o) const { return kind == o.kind && index == o.index; }
};

struct GraphTopology {
  std::vector<int> order;  // the layers' places among those given, in run order
  std::vector<std::vector<LayerSource>> inputs;  // per layer in run order
  std::vector<int> readers;                      // per layer in run order: inputs naming it
  // Whether every layer reads just the one before it (the first: the input).
  bool chain = true;
};

// The topology of `layers` (a spec's, in its order), whose inputs may name
// other layers, "input", or one of `parts`. An empty inputs list reads the
// layer before (the input, for the first). The order keeps the spec's
// where the inputs allow; the last layer run is the one no other reads,
// the network's output. InvalidArgument, naming the layers: two layers of
// one name, an input naming nothing, a cycle, or more than one layer that
// no other reads.
StatusOr<GraphTopology> WireLayers(const std::vector<const proto::LayerSpec*>& layers,
                                   const std::vector<std::string>& parts);

}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_GRAPH_TOPOLOGY_H_
