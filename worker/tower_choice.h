// Where a worker's towers run (--num_towers, --num_gpus): K towers on the
// CPU, or one on each of K GPUs. A worker asked for GPUs on a host that has
// none (no driver, no device, or a build without CUDA) trains on the CPU
// with as many towers, so that a step still takes K batches, and says why.
#ifndef PSTRAIN_WORKER_TOWER_CHOICE_H_
#define PSTRAIN_WORKER_TOWER_CHOICE_H_

#include <string>

#include "core/status.h"
#include "nn/gpus.h"
#include "nn/towers.h"

namespace pstrain {

struct TowerChoice {
  int towers = 1;
  nn::TowerDevices devices = nn::TowerDevices::kCpu;
  std::string why;  // for the log
};

// InvalidArgument for towers outside [1, 64] or GPUs outside [0, 64], for
// both flags above their defaults, and for more GPUs asked for than `probe`
// found (some GPUs but too few is a mistake in the job, not a CPU host).
StatusOr<TowerChoice> ChooseTowers(int num_towers, int num_gpus, const nn::GpuProbe& probe);

}  // namespace pstrain

#endif  // PSTRAIN_WORKER_TOWER_CHOICE_H_
