// TFRecord files of tf.train.Example, plain or gzip-compressed: record
// framing, CRCs, and each Example's features.
#include <cstddef>
#include <cstdint>

#include "data/example_dataset.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pstrain::fuzz::InputFile file(".tfrecord", data, size);
  (void)pstrain::data::ReadExampleFile(file.path());
  return 0;
}
