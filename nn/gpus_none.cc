#include "nn/gpus.h"

namespace pstrain {
namespace nn {

GpuProbe ProbeGpus() { return {{}, "this build has no CUDA backend (PSTRAIN_CUDA=OFF)"}; }

}  // namespace nn
}  // namespace pstrain
