// TensorBoard event files (TFRecords of tensorflow.Event).
#include <cstddef>
#include <cstdint>

#include "chief/summary/event_reader.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pstrain::fuzz::InputFile file(".tfevents", data, size);
  (void)pstrain::ReadEventFile(file.path());
  return 0;
}
