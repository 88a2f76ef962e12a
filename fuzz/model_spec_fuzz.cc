// A model spec, as a worker, the chief and pstrain_model_info read a user's
// ModelSpec file: parsed from protobuf text, then every layer checked and
// built (shapes, variables, the backend's kernels), as GraphModel::Create
// does before any step.
#include <cstddef>
#include <cstdint>
#include <string>

#include "nn/graph_model.h"
#include "nn/model_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto spec = pstrain::nn::ParseModelSpec(std::string(reinterpret_cast<const char*>(data), size),
                                          "fuzz.pbtxt");
  if (spec.ok()) (void)pstrain::nn::GraphModel::Create(*spec);
  return 0;
}
