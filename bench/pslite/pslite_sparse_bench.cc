// pslite_sparse_bench: ps-lite's counterpart of bench/sparse_bench.cc.
// Built against a ps-lite checkout by run_pslite_sparse_bench.sh (README.md
// here); it is not part of pstrain's CMake build.
//
// One binary for all three ps-lite roles (DMLC_ROLE = scheduler, server,
// worker); one row dimension a run, from the environment variable
// PSLITE_SPARSE_DIM (the server and the worker both read it).
//
// Server: an embedding table trained by Adagrad (learning rate 0.01, initial
// accumulator 0.1). A hash map (std::unordered_map) takes a key to its row
// number; the rows live in blocks of kRowsPerBlock rows, each row its dim
// weights followed by its dim accumulators. A push of a key without a row
// makes one (weights 0, accumulators 0.1) and then applies the gradient:
// accum += g * g; w -= lr * g / sqrt(accum). A pull answers each key's
// weights (zeros for a key without a row). ps-lite calls the handler from
// one thread (the server's customer thread), so the table takes no lock.
//
// Worker (positional arguments, all optional):
//   rows           table rows (default 10000000)
//   distributions  comma-separated, uniform and/or zipf (default uniform,zipf)
//   seconds        measured wall time of pulls, then of pushes (default 3)
// It makes every row first by pushing zero gradients for keys 0..rows-1,
// 65,536 keys a push. Then, per distribution, it draws 64 batches of 4,096
// unique keys by sparse_bench's rule (mt19937_64 seeded 17; uniform in
// [0, rows), or Zipf ranks with s = 1.1 mapped to keys by
// rank * 1000003 % rows; 4 x 4,096 draws, more one at a time until 4,096
// are distinct, the first 4,096 distinct in the order drawn), sorts each
// batch (ps-lite wants sorted, unique keys), and measures pulls (ZPull +
// Wait, into one buffer of the worker's) for `seconds`, then pushes (ZPush +
// Wait of a gradient of 0.01s) for `seconds`, each after 3 warm-up ops. A
// line per op, in sparse_bench's columns:
//   dim  keys (uniform|zipf)  op (pull|push)  keys/s  GB/s  client us/key  ps us/key
// GB/s counts the payload, 8 + 4 x dim bytes a key; the CPU columns are
// utime + stime from /proc/<pid>/stat over the measured ops (all threads),
// per key, of this process and of the server, whose pid comes from
// PSLITE_BENCH_SERVER_PID. PSLITE_SPARSE_HEADER=0 leaves out the header
// lines (the run script prints them once for all dims).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ps/ps.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr float kLearningRate = 0.01f;
constexpr float kInitialAccumulator = 0.1f;
constexpr int kBatchKeys = 4096;      // unique keys a measured pull or push
constexpr int kBatches = 64;          // batches drawn per distribution
constexpr int64_t kFillKeys = 65536;  // keys a push while the rows are made
constexpr int kWarmupOps = 3;
constexpr double kZipfS = 1.1;

int DimFromEnv() {
  const char* text = std::getenv("PSLITE_SPARSE_DIM");
  CHECK(text) << "set PSLITE_SPARSE_DIM to the row dimension";
  const int dim = std::atoi(text);
  CHECK(dim >= 1 && dim <= 4096) << "PSLITE_SPARSE_DIM=" << text << " is not in [1, 4096]";
  return dim;
}

// ---------------------------------------------------------------- server

class AdagradTable {
 public:
  explicit AdagradTable(int dim) : dim_(dim) {}

  void Handle(const ps::KVMeta& meta, const ps::KVPairs<float>& req, ps::KVServer<float>* server) {
    const size_t n = req.keys.size();
    const size_t dim = static_cast<size_t>(dim_);
    ps::KVPairs<float> res;
    if (meta.push) {
      CHECK(req.lens.empty()) << "this benchmark sends rows of one length";
      CHECK_EQ(req.vals.size(), n * dim) << "a push's rows are not of dim " << dim_;
      for (size_t i = 0; i < n; ++i) {
        float* __restrict w = RowFor(req.keys[i]);
        float* __restrict accum = w + dim;
        const float* __restrict g = req.vals.data() + i * dim;
        for (size_t j = 0; j < dim; ++j) {
          accum[j] += g[j] * g[j];
          w[j] -= kLearningRate * g[j] / std::sqrt(accum[j]);
        }
      }
    }
    if (meta.pull) {
      res.keys = req.keys;
      float* out = new float[n * dim];
      res.vals.reset(out, n * dim, [](float* p) { delete[] p; });
      for (size_t i = 0; i < n; ++i) {
        auto it = index_.find(req.keys[i]);
        if (it == index_.end()) {
          std::memset(out + i * dim, 0, dim * sizeof(float));
        } else {
          std::memcpy(out + i * dim, Row(it->second), dim * sizeof(float));
        }
      }
    }
    server->Response(meta, res);  // a pull's rows go out zero-copy
  }

 private:
  static constexpr uint32_t kRowsPerBlock = 65536;

  float* Row(uint32_t row) {
    return blocks_[row / kRowsPerBlock].get() + size_t{row % kRowsPerBlock} * 2 * dim_;
  }

  // The key's row, made (weights 0, accumulators kInitialAccumulator) if it
  // has none.
  float* RowFor(ps::Key key) {
    auto inserted = index_.emplace(key, rows_);
    if (!inserted.second) return Row(inserted.first->second);
    CHECK_LT(rows_, UINT32_MAX) << "too many rows";
    if (rows_ % kRowsPerBlock == 0) {
      blocks_.emplace_back(new float[size_t{kRowsPerBlock} * 2 * dim_]);
    }
    float* w = Row(rows_++);
    std::fill(w, w + dim_, 0.0f);
    std::fill(w + dim_, w + 2 * dim_, kInitialAccumulator);
    return w;
  }

  const int dim_;
  std::unordered_map<ps::Key, uint32_t> index_;  // key -> row number
  std::vector<std::unique_ptr<float[]>> blocks_;
  uint32_t rows_ = 0;
};

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

// VmRSS of a process, in bytes (0 when /proc does not say).
double RssBytes(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, 6, "VmRSS:") == 0) return std::atof(line.c_str() + 6) * 1024;
  }
  return 0;
}

std::vector<std::string> Split(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

// sparse_bench's KeyBatches, draw for draw: batches of unique keys in
// [0, rows), the first `batch` distinct keys in the order drawn.
class KeyBatches {
 public:
  KeyBatches(const std::string& distribution, int64_t rows, int batch, uint64_t seed)
      : rows_(rows), batch_(batch), zipf_(distribution == "zipf"), rng_(seed) {
    if (!zipf_) return;
    cdf_.resize(rows);
    double sum = 0;
    for (int64_t r = 0; r < rows; ++r) cdf_[r] = sum += std::pow(double(r + 1), -kZipfS);
    for (double& c : cdf_) c /= sum;
  }

  std::vector<int64_t> Next() {
    std::vector<int64_t> unique;
    std::unordered_set<int64_t> seen;
    auto draw = [&]() {
      const int64_t key = Draw();
      if (seen.insert(key).second) unique.push_back(key);
    };
    for (int64_t i = 0; i < 4 * int64_t{batch_}; ++i) draw();
    while (static_cast<int>(unique.size()) < batch_) draw();
    unique.resize(batch_);
    return unique;
  }

 private:
  int64_t Draw() {
    if (!zipf_) return std::uniform_int_distribution<int64_t>(0, rows_ - 1)(rng_);
    const double u = std::uniform_real_distribution<double>(0, 1)(rng_);
    const int64_t rank = std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin();
    return static_cast<int64_t>(
        (static_cast<unsigned __int128>(std::min(rank, rows_ - 1)) * 1000003u) %
        static_cast<uint64_t>(rows_));
  }

  const int64_t rows_;
  const int batch_;
  const bool zipf_;
  std::mt19937_64 rng_;
  std::vector<double> cdf_;
};

struct Phase {
  int64_t keys = 0;
  double seconds = 0, client_cpu = 0, ps_cpu = 0;
};

// Runs `op` on the batches in turn for `seconds`, after kWarmupOps.
template <typename Op>
Phase Measure(const std::vector<ps::SArray<ps::Key>>& batches, double seconds,
              const std::string& server_pid, Op op) {
  for (int i = 0; i < kWarmupOps; ++i) op(batches[i % batches.size()]);
  Phase p;
  const Clock::time_point t0 = Clock::now();
  const double self0 = CpuSeconds("self"), ps0 = CpuSeconds(server_pid);
  size_t i = 0;
  while (p.seconds < seconds) {
    const ps::SArray<ps::Key>& keys = batches[i++ % batches.size()];
    op(keys);
    p.keys += static_cast<int64_t>(keys.size());
    p.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  }
  p.client_cpu = CpuSeconds("self") - self0;
  p.ps_cpu = CpuSeconds(server_pid) - ps0;
  return p;
}

void Print(int dim, const std::string& distribution, const char* op, const Phase& p) {
  const double bytes_per_key = 8.0 + 4.0 * dim;
  std::printf("%4d %-8s %-5s %12.0f %8.3f %14.3f %10.3f\n", dim, distribution.c_str(), op,
              p.keys / p.seconds, p.keys * bytes_per_key / p.seconds / 1e9,
              p.client_cpu * 1e6 / p.keys, p.ps_cpu * 1e6 / p.keys);
  std::fflush(stdout);
}

void RunWorker(int argc, char** argv) {
  const int dim = DimFromEnv();
  const int64_t rows = argc > 1 ? std::atoll(argv[1]) : 10000000;
  const std::vector<std::string> distributions = Split(argc > 2 ? argv[2] : "uniform,zipf");
  const double seconds = argc > 3 ? std::atof(argv[3]) : 3.0;
  const char* server_pid = std::getenv("PSLITE_BENCH_SERVER_PID");
  CHECK(server_pid) << "set PSLITE_BENCH_SERVER_PID to the server process's pid";
  CHECK_GE(rows, kBatchKeys) << "rows must be at least " << kBatchKeys;
  CHECK(!distributions.empty()) << "no distributions";
  for (const std::string& d : distributions) {
    CHECK(d == "uniform" || d == "zipf")
        << "distribution '" << d << "' is neither uniform nor zipf";
  }
  const char* header = std::getenv("PSLITE_SPARSE_HEADER");
  if (!header || std::string(header) != "0") {
    std::printf("transport: ps-lite (ZeroMQ van); %lld rows, Adagrad, %d unique keys a request\n",
                static_cast<long long>(rows), kBatchKeys);
    std::printf("%4s %-8s %-5s %12s %8s %14s %10s\n", "dim", "keys", "op", "keys/s", "GB/s",
                "client us/key", "ps us/key");
    std::fflush(stdout);
  }

  ps::KVWorker<float> kv(0, 0);

  // Every row made first, by zero gradients (sorted keys, kFillKeys a push).
  const double rss0 = RssBytes(server_pid);
  const Clock::time_point t_fill = Clock::now();
  {
    const ps::SArray<float> zeros(static_cast<size_t>(kFillKeys) * dim, 0.0f);
    for (int64_t first = 0; first < rows; first += kFillKeys) {
      const int64_t n = std::min(rows, first + kFillKeys) - first;
      ps::SArray<ps::Key> keys(static_cast<size_t>(n));
      for (int64_t k = 0; k < n; ++k) keys[k] = static_cast<ps::Key>(first + k);
      kv.Wait(kv.ZPush(keys, zeros.segment(0, static_cast<size_t>(n) * dim)));
    }
  }
  const double fill_s = std::chrono::duration<double>(Clock::now() - t_fill).count();
  const double rss1 = RssBytes(server_pid);
  std::fprintf(stderr,
               "dim %d: %lld rows made in %.1f s; server RSS %.0f MB after (%.0f MB before), "
               "%.0f bytes a row\n",
               dim, static_cast<long long>(rows), fill_s, rss1 / 1e6, rss0 / 1e6,
               (rss1 - rss0) / rows);

  const ps::SArray<float> grad(static_cast<size_t>(kBatchKeys) * dim, 0.01f);
  ps::SArray<float> out(static_cast<size_t>(kBatchKeys) * dim, 0.0f);
  for (const std::string& distribution : distributions) {
    KeyBatches draw(distribution, rows, kBatchKeys, 17);
    std::vector<ps::SArray<ps::Key>> batches;
    for (int b = 0; b < kBatches; ++b) {
      std::vector<int64_t> keys = draw.Next();
      std::sort(keys.begin(), keys.end());
      ps::SArray<ps::Key> sorted(keys.size());
      for (size_t k = 0; k < keys.size(); ++k) sorted[k] = static_cast<ps::Key>(keys[k]);
      batches.push_back(sorted);
    }
    const Phase pull = Measure(batches, seconds, server_pid, [&](const ps::SArray<ps::Key>& keys) {
      kv.Wait(kv.ZPull(keys, &out));
      CHECK_EQ(out.size(), keys.size() * dim);
    });
    Print(dim, distribution, "pull", pull);
    const Phase push = Measure(batches, seconds, server_pid, [&](const ps::SArray<ps::Key>& keys) {
      kv.Wait(kv.ZPush(keys, grad));
    });
    Print(dim, distribution, "push", push);
    // Not measured: every row of a pushed batch has moved against the
    // gradient (Adagrad's step is lr * g / sqrt(accum) > 0 for g > 0).
    kv.Wait(kv.ZPull(batches[0], &out));
    for (float v : out) CHECK(v < 0 && std::isfinite(v)) << "a pushed row holds " << v;
  }
}

}  // namespace

int main(int argc, char** argv) {
  ps::Start(0, argv[0]);
  if (ps::IsServer()) {
    auto* table = new AdagradTable(DimFromEnv());
    auto* server = new ps::KVServer<float>(0);
    server->set_request_handle([table](const ps::KVMeta& meta, const ps::KVPairs<float>& req,
                                       ps::KVServer<float>* s) { table->Handle(meta, req, s); });
    ps::RegisterExitCallback([server, table]() {
      delete server;
      delete table;
    });
  }
  if (ps::IsWorker()) RunWorker(argc, argv);
  ps::Finalize(0, true);
  return 0;
}
