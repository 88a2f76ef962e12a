#include "cluster/placement_flags.h"

#include <string>

DEFINE_string(placement, "greedy",
              "How variables are placed on ps tasks: greedy (by bytes, balanced) or "
              "round_robin (TF's replica_device_setter default).");
DEFINE_int64(min_slice_bytes, 256 << 10,
             "A variable (with its optimizer slots) larger than this is partitioned along "
             "axis 0 over several ps tasks.");

namespace pstrain {
namespace cluster {

StatusOr<PlacementOptions> PlacementOptionsFromFlags() {
  PlacementOptions options;
  PS_ASSIGN_OR_RETURN(options.strategy, ParsePlacementStrategy(FLAGS_placement));
  if (FLAGS_min_slice_bytes < 1) {
    return InvalidArgument("--min_slice_bytes must be at least 1, got " +
                           std::to_string(FLAGS_min_slice_bytes));
  }
  options.min_slice_bytes = FLAGS_min_slice_bytes;
  return options;
}

}  // namespace cluster
}  // namespace pstrain
