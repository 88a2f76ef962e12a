// event_reader: prints the events of TensorBoard event files, one per line,
// and verifies the CRCs of every record. Exits 0 if every file read whole,
// 1 otherwise (a bad or missing file, a usage error).
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <cstdio>
#include <memory>
#include <string>

#include "chief/summary/event_reader.h"
#include "core/task_main.h"

namespace {

// Prints every event of `path`; returns how the read ended (OK at its end).
pstrain::Status PrintFile(const std::string& path, int* count) {
  PS_ASSIGN_OR_RETURN(std::unique_ptr<pstrain::EventReader> reader,
                      pstrain::EventReader::Open(path));
  for (;;) {
    tensorflow::Event event;
    const pstrain::Status s = reader->Next(&event);
    if (s.code() == pstrain::Code::kOutOfRange) return pstrain::OkStatus();
    PS_RETURN_IF_ERROR(s);
    std::printf("%s\n", pstrain::DescribeEvent(event).c_str());
    ++*count;
  }
}

}  // namespace

int main(int argc, char** argv) {
  pstrain::InitToolMain(
      "event_reader FILE...\n"
      "Prints each event of TensorBoard event files (step, wall time, each value: scalar,\n"
      "histogram num/min/max, image WxHxC), one per line, and verifies every record's CRCs.\n"
      "Exits 0 if every file is whole, 1 otherwise.",
      &argc, &argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: event_reader FILE... (see --help)\n");
    return 1;
  }
  int failed = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string path = argv[i];
    if (argc > 2) std::printf("== %s\n", path.c_str());
    int count = 0;
    const pstrain::Status s = PrintFile(path, &count);
    std::fflush(stdout);
    if (s.ok()) {
      std::fprintf(stderr, "%s: %d events, every CRC verified\n", path.c_str(), count);
    } else {
      std::fprintf(stderr, "event_reader: %s (after %d good events)\n", s.ToString().c_str(),
                   count);
      ++failed;
    }
  }
  return failed == 0 ? 0 : 1;
}
