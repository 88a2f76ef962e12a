#include "worker/overlap_choice.h"

namespace pstrain {

StatusOr<OverlapChoice> ChooseOverlap(const std::string& flag, int compute_threads,
                                      const cluster::CpuBudget& budget,
                                      const cluster::ClusterConfig& config) {
  if (flag == "on") return OverlapChoice{true, "--overlap_transfers=on"};
  if (flag == "off") return OverlapChoice{false, "--overlap_transfers=off"};
  if (flag != "auto") {
    return InvalidArgument("--overlap_transfers must be auto, on or off, got '" + flag + "'");
  }
  const int workers = std::max(1, cluster::WorkersOnHostOf(config.spec, config.task));
  const int busy = compute_threads * workers;
  const int usable = budget.Usable();
  const std::string counts = std::to_string(workers) + (workers == 1 ? " worker" : " workers") +
                             " on this host computing on " + std::to_string(compute_threads) +
                             (compute_threads == 1 ? " thread" : " threads") + " each, " +
                             std::to_string(usable) + " usable CPUs";
  if (busy < usable) return OverlapChoice{true, counts + ": a CPU is left for the transfers"};
  return OverlapChoice{false, counts +
                                  ": no CPU is left for the transfers "
                                  "(--overlap_transfers=on overlaps them anyway)"};
}

}  // namespace pstrain
