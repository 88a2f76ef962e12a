#include "ps/sync_flags.h"

DEFINE_bool(sync_replicas, false,
            "Synchronous training: each step averages the gradients of "
            "--replicas_to_aggregate workers (TensorFlow's SyncReplicasOptimizer)");
DEFINE_int32(replicas_to_aggregate, 0, "Gradients averaged per sync step (0: every worker)");
DEFINE_int32(total_num_replicas, 0,
             "Workers taking part in sync training (0: every worker); those beyond "
             "--replicas_to_aggregate are backups that hide stragglers");
DEFINE_bool(strict_sync, false, "Sync: count distinct workers, one gradient per worker per step");
DEFINE_double(step_timeout_secs, 30,
              "Sync: how long a worker waits for the step to advance before it logs what it "
              "waits for and waits again");
DEFINE_int32(staleness, -1,
             "Async: keep every worker within this many steps of the slowest live worker "
             "(-1: unbounded)");
DEFINE_double(heartbeat_timeout_secs, 10, "A worker silent for this long is declared dead");

namespace pstrain {

StatusOr<proto::SyncConfig> SyncConfigFromFlags(int num_workers) {
  proto::SyncConfig c;
  if (FLAGS_step_timeout_secs <= 0) return InvalidArgument("--step_timeout_secs must be > 0");
  if (FLAGS_heartbeat_timeout_secs <= 0) {
    return InvalidArgument("--heartbeat_timeout_secs must be > 0");
  }
  if (!FLAGS_sync_replicas) {
    if (FLAGS_staleness < -1) return InvalidArgument("--staleness must be >= 0, or -1 for none");
    return c;
  }
  if (FLAGS_staleness >= 0) {
    return InvalidArgument(
        "--staleness bounds asynchronous training; it does not combine with "
        "--sync_replicas");
  }
  const int total = FLAGS_total_num_replicas > 0 ? FLAGS_total_num_replicas : num_workers;
  const int replicas = FLAGS_replicas_to_aggregate > 0 ? FLAGS_replicas_to_aggregate : total;
  if (FLAGS_total_num_replicas < 0 || FLAGS_replicas_to_aggregate < 0) {
    return InvalidArgument("--replicas_to_aggregate and --total_num_replicas must be >= 0");
  }
  if (total != num_workers) {
    return InvalidArgument("--total_num_replicas=" + std::to_string(total) +
                           " but the cluster spec has " + std::to_string(num_workers) + " workers");
  }
  if (replicas > total) {
    return InvalidArgument("--replicas_to_aggregate=" + std::to_string(replicas) +
                           " exceeds --total_num_replicas=" + std::to_string(total));
  }
  c.set_enabled(true);
  c.set_replicas_to_aggregate(replicas);
  c.set_total_num_replicas(total);
  c.set_strict(FLAGS_strict_sync);
  return c;
}

}  // namespace pstrain
