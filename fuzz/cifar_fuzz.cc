// CIFAR-10 binary batch files.
#include <cstddef>
#include <cstdint>

#include "data/cifar_dataset.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pstrain::fuzz::InputFile file(".bin", data, size);
  (void)pstrain::data::ReadCifar10File(file.path());
  return 0;
}
