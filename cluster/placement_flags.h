// Command-line flags for variable placement over ps tasks (see placement.h).
// Read them in main and pass the values down.
#ifndef PSTRAIN_CLUSTER_PLACEMENT_FLAGS_H_
#define PSTRAIN_CLUSTER_PLACEMENT_FLAGS_H_

#include <gflags/gflags.h>

DECLARE_string(placement);
DECLARE_int64(min_slice_bytes);

#endif  // PSTRAIN_CLUSTER_PLACEMENT_FLAGS_H_
