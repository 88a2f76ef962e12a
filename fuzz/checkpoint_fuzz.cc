// Checkpoints: the input is two parts (fuzz_input.h), the index file and
// the data file of one checkpoint.
#include <cstddef>
#include <cstdint>
#include <string>

#include "chief/checkpoint.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pstrain::fuzz::Parts parts(data, size);
  const std::string index = parts.Next();
  const std::string contents = parts.Next();
  pstrain::fuzz::InputFile index_file(".ckpt.index", reinterpret_cast<const uint8_t*>(index.data()),
                                      index.size());
  pstrain::fuzz::InputFile data_file(
      ".ckpt.data", reinterpret_cast<const uint8_t*>(contents.data()), contents.size());
  const std::string prefix = index_file.path().substr(0, index_file.path().size() - 6);
  (void)pstrain::ReadCheckpoint(prefix);
  return 0;
}
