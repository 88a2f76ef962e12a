// Checkpoints: the input is two parts (fuzz_input.h), the index file and
// the data file of one checkpoint, read as pstrain's format, then as
// TensorFlow's (the index a LevelDB table, the data PREFIX.data-00000-of-00001).
#include <cstddef>
#include <cstdint>
#include <cstdio>
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
  const std::string tf_data = prefix + ".data-00000-of-00001";
  if (std::FILE* f = std::fopen(tf_data.c_str(), "wb")) {
    std::fwrite(contents.data(), 1, contents.size(), f);
    std::fclose(f);
    (void)pstrain::ReadCheckpoint(prefix);
    std::remove(tf_data.c_str());
  }
  return 0;
}
