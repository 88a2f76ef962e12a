// Whether a worker overlaps its transfers with its computation
// (--overlap_transfers). Overlap hides the pull and push behind compute only
// where a CPU is left for them to run on: where the computation of the
// host's workers already takes every usable CPU, the transfers preempt the
// compute threads mid-layer and the step gets slower than doing one after
// the other (overlap_bench: 1.70 against 1.59 times the
// one-process step with two compute threads on two CPUs; 1.09 against 1.19
// with one).
#ifndef PSTRAIN_WORKER_OVERLAP_CHOICE_H_
#define PSTRAIN_WORKER_OVERLAP_CHOICE_H_

#include <string>

#include "cluster/cluster_spec.h"
#include "cluster/cpu_share.h"
#include "core/status.h"

namespace pstrain {

struct OverlapChoice {
  bool overlap = true;
  std::string why;  // for the log
};

// flag: "on", "off", or "auto": overlap when compute_threads times the
// workers on this task's host leave at least one of budget.Usable() CPUs
// free. InvalidArgument for any other flag value.
StatusOr<OverlapChoice> ChooseOverlap(const std::string& flag, int compute_threads,
                                      const cluster::CpuBudget& budget,
                                      const cluster::ClusterConfig& config);

}  // namespace pstrain

#endif  // PSTRAIN_WORKER_OVERLAP_CHOICE_H_
