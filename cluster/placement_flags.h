// Command-line flags for variable placement over ps tasks (see placement.h).
// Read them in main and pass the values down.
#ifndef PSTRAIN_CLUSTER_PLACEMENT_FLAGS_H_
#define PSTRAIN_CLUSTER_PLACEMENT_FLAGS_H_

#include <gflags/gflags.h>

#include "cluster/placement.h"

DECLARE_string(placement);
DECLARE_int64(min_slice_bytes);

namespace pstrain {
namespace cluster {

// The flags as PlacementOptions; InvalidArgument for an unknown strategy
// or a slice size below 1.
StatusOr<PlacementOptions> PlacementOptionsFromFlags();

}  // namespace cluster
}  // namespace pstrain

#endif  // PSTRAIN_CLUSTER_PLACEMENT_FLAGS_H_
