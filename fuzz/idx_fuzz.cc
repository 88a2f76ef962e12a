// IDX files (MNIST, Fashion-MNIST), plain or gzip-compressed.
#include <cstddef>
#include <cstdint>

#include "data/idx_reader.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pstrain::fuzz::InputFile file(".idx", data, size);
  (void)pstrain::data::ReadIdxFile(file.path());
  return 0;
}
