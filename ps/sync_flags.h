// Flags for the training mode, read by the chief (which sends the sync
// config to the ps tasks at Init) and the workers (which wait accordingly).
#ifndef PSTRAIN_PS_SYNC_FLAGS_H_
#define PSTRAIN_PS_SYNC_FLAGS_H_

#include <gflags/gflags.h>

#include "core/status.h"
#include "proto/ps.pb.h"

DECLARE_bool(sync_replicas);
DECLARE_int32(replicas_to_aggregate);
DECLARE_int32(total_num_replicas);
DECLARE_bool(strict_sync);
DECLARE_double(step_timeout_secs);
DECLARE_int32(staleness);
DECLARE_double(heartbeat_timeout_secs);

namespace pstrain {

// The sync config for a cluster of num_workers workers; replicas default to
// every worker. InvalidArgument naming the flag for an impossible setting.
StatusOr<proto::SyncConfig> SyncConfigFromFlags(int num_workers);

}  // namespace pstrain

#endif  // PSTRAIN_PS_SYNC_FLAGS_H_
