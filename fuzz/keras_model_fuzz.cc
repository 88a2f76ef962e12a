// A Keras model's JSON, as --model=keras:FILE.json reads it: parsed and
// made into a ModelSpec (nn/keras_model.h), then every layer checked and
// built, as GraphModel::Create does before any step.
#include <cstddef>
#include <cstdint>
#include <string>

#include "nn/graph_model.h"
#include "nn/keras_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto spec = pstrain::nn::ModelSpecFromKerasJson(
      std::string(reinterpret_cast<const char*>(data), size), "fuzz.json");
  if (spec.ok()) (void)pstrain::nn::GraphModel::Create(*spec);
  return 0;
}
