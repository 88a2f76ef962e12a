// The CPU backend: convolution, dense layers and max pooling on oneDNN; LRN,
// average pooling, dropout, batch norm, ReLU and the loss written by hand
// (OpenMP over the cores).
#ifndef PSTRAIN_NN_CPU_CPU_BACKEND_H_
#define PSTRAIN_NN_CPU_CPU_BACKEND_H_

#include <memory>

#include "core/status.h"
#include "nn/backend.h"

namespace pstrain {
namespace nn {
namespace cpu {

// Internal when oneDNN cannot make its CPU engine.
StatusOr<std::unique_ptr<Backend>> CreateCpuBackend();

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_CPU_CPU_BACKEND_H_
