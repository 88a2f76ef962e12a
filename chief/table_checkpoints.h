// The embedding tables' part of a checkpoint: their rows streamed from
// every ps into the checkpoint's rows file, block by block, and back into
// any number of ps tasks, each key to the ps that holds it now
// (cluster/key_partition.h). The chief never holds a table whole.
#ifndef PSTRAIN_CHIEF_TABLE_CHECKPOINTS_H_
#define PSTRAIN_CHIEF_TABLE_CHECKPOINTS_H_

#include "chief/checkpoint.h"
#include "core/status.h"
#include "ps/client/ps_fleet.h"

namespace pstrain {

// Adds every table of the fleet to `writer`: every row (with its slots),
// or with `delta` the rows changed since the last start_deltas and the keys
// expiry dropped since. start_deltas: a full checkpoint that deltas follow.
Status SaveTables(PsFleet* fleet, CheckpointWriter* writer, bool delta, bool start_deltas);

// Writes the checkpoint's tables into the fleet's ps tasks, which were just
// initialized (empty tables): a delta's full checkpoint `full` first, then
// the checkpoint's own rows and erasures. A table the model no longer has
// is skipped with a warning.
Status RestoreTables(PsFleet* fleet, const Checkpoint& ckpt, const Checkpoint* full);

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_TABLE_CHECKPOINTS_H_
