// pslite_transfer_bench: ps-lite's counterpart of bench/transfer_bench.cc.
// Built against a ps-lite checkout by run_pslite_bench.sh (README.md here);
// it is not part of pstrain's CMake build.
//
// One binary for all three ps-lite roles (DMLC_ROLE = scheduler, server,
// worker). The server keeps one float array per key: a push memcpy's the
// pushed values into it, a pull returns it (the response shares the stored
// buffer, no copy). The worker pushes a tensor of N bytes as ONE key with
// the whole tensor as its value array, pulls it back into its own buffer,
// and repeats; per size it prints a markdown row:
//   | bytes | rounds | median ms | min ms | GB/s each way |
//   | worker CPU ms/MB | server CPU ms/MB |
// GB/s each way = 2 x bytes / median round (pstrain's convention); CPU ms
// per MB = (utime + stime from /proc/<pid>/stat over the measured rounds)
// / (2 x bytes x rounds / 1e6). The server's pid comes from the environment
// variable PSLITE_BENCH_SERVER_PID (the run script sets it).
//
// Worker arguments (all optional, positional):
//   sizes     comma-separated bytes, multiples of 4
//             (default 4096,65536,1048576,4382720,16777216,67108864,268435456)
//   seconds   measured wall time per size (default 2)
//   min_rounds  (default 5)    warmup_rounds  (default 2)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "ps/ps.h"

namespace {

using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------- server

std::mutex g_store_mu;
std::unordered_map<ps::Key, ps::SArray<float>> g_store;

void StoreHandle(const ps::KVMeta& meta, const ps::KVPairs<float>& req,
                 ps::KVServer<float>* server) {
  ps::KVPairs<float> res;
  CHECK_EQ(req.keys.size(), 1u) << "this benchmark sends one key per request";
  const ps::Key key = req.keys[0];
  std::lock_guard<std::mutex> lk(g_store_mu);
  ps::SArray<float>& stored = g_store[key];
  if (meta.push) {
    if (stored.size() != req.vals.size()) stored = ps::SArray<float>(req.vals.size());
    std::memcpy(stored.data(), req.vals.data(), req.vals.size() * sizeof(float));
  }
  if (meta.pull) {
    res.keys = req.keys;
    res.vals = stored;  // shares the buffer; ps-lite's zmq van sends it zero-copy
  }
  server->Response(meta, res);
}

// ---------------------------------------------------------------- worker

// utime + stime of a process, in seconds (all its threads).
double CpuSeconds(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/stat");
  std::string line;
  std::getline(in, line);
  const size_t close = line.rfind(')');
  CHECK(close != std::string::npos) << "cannot read /proc/" << pid << "/stat";
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  // Fields after the command: state(3) ... utime(14) stime(15).
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::strtoull(field.c_str(), nullptr, 10);
    if (i == 15) stime = std::strtoull(field.c_str(), nullptr, 10);
  }
  return static_cast<double>(utime + stime) / sysconf(_SC_CLK_TCK);
}

std::vector<long long> ParseSizes(const std::string& text) {
  std::vector<long long> sizes;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    const long long v = std::strtoll(item.c_str(), nullptr, 10);
    CHECK(v >= 4 && v % 4 == 0) << "bad size '" << item << "' (bytes, a multiple of 4)";
    sizes.push_back(v);
  }
  return sizes;
}

void RunWorker(int argc, char** argv) {
  const std::vector<long long> sizes =
      ParseSizes(argc > 1 ? argv[1] : "4096,65536,1048576,4382720,16777216,67108864,268435456");
  const double seconds = argc > 2 ? std::atof(argv[2]) : 2.0;
  const int min_rounds = argc > 3 ? std::atoi(argv[3]) : 5;
  const int warmup_rounds = argc > 4 ? std::atoi(argv[4]) : 2;
  const char* server_pid = std::getenv("PSLITE_BENCH_SERVER_PID");
  CHECK(server_pid) << "set PSLITE_BENCH_SERVER_PID to the server process's pid";

  ps::KVWorker<float> kv(0, 0);
  std::printf(
      "| bytes | rounds | median ms | min ms | GB/s each way | worker CPU ms/MB "
      "| server CPU ms/MB |\n|---|---|---|---|---|---|---|\n");
  std::fflush(stdout);

  ps::Key next_key = 0;
  for (long long bytes : sizes) {
    const size_t n = static_cast<size_t>(bytes / 4);
    ps::SArray<ps::Key> keys(1, next_key++);  // a fresh key (one tensor) per size
    ps::SArray<float> grad(n, 1.0f);
    ps::SArray<float> out(n, 0.0f);
    auto round = [&]() {
      kv.Wait(kv.ZPush(keys, grad));
      kv.Wait(kv.ZPull(keys, &out));
    };
    for (int i = 0; i < warmup_rounds; ++i) round();
    CHECK_EQ(out[n - 1], 1.0f) << "pulled values differ from pushed ones";

    std::vector<double> ms;
    const double w0 = CpuSeconds("self"), s0 = CpuSeconds(server_pid);
    const Clock::time_point t_begin = Clock::now();
    while (static_cast<int>(ms.size()) < min_rounds ||
           std::chrono::duration<double>(Clock::now() - t_begin).count() < seconds) {
      const Clock::time_point t0 = Clock::now();
      round();
      ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    const double w1 = CpuSeconds("self"), s1 = CpuSeconds(server_pid);

    const int rounds = static_cast<int>(ms.size());
    std::sort(ms.begin(), ms.end());
    const double median_ms = ms[ms.size() / 2];
    const double mb_moved = 2.0 * bytes * rounds / 1e6;  // both directions
    std::printf("| %lld | %d | %.3f | %.3f | %.2f | %.3f | %.3f |\n", bytes, rounds, median_ms,
                ms.front(), 2.0 * bytes / (median_ms * 1e-3) / 1e9, (w1 - w0) * 1e3 / mb_moved,
                (s1 - s0) * 1e3 / mb_moved);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  ps::Start(0, argv[0]);
  if (ps::IsServer()) {
    auto* server = new ps::KVServer<float>(0);
    server->set_request_handle(StoreHandle);
    ps::RegisterExitCallback([server]() { delete server; });
  }
  if (ps::IsWorker()) RunWorker(argc, argv);
  ps::Finalize(0, true);
  return 0;
}
