// embedding_table_bench: one EmbeddingTable in this process, no transport:
// the table's own CPU per key as it grows (docs/BENCHMARKS.md). The table
// (--dim floats a row, Adagrad) grows to --rows hashed keys by WriteRows,
// and as it passes each of --measure_at, requests of --ids ids drawn from
// a power law (--zipf_s) over the rows there are, made unique, are looked
// up (a pull's work on the ps) and then applied as a gradient (a push's),
// for --requests requests each. Prints keys per process CPU second: what
// sparse_scale measures through a ps_server, less the requests' transport.
// Beside each point, the machine's own floor: the time a random 64-byte
// line of a buffer as big as the rows costs, read as the table reads rows
// (prefetched a few keys ahead), so that what the table's size costs can
// be told from what memory's size costs.
#include <gflags/gflags.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "bench/power_law.h"
#include "core/huge_pages.h"
#include "core/prefetch.h"
#include "core/splitmix64.h"
#include "core/task_main.h"
#include "ps/embedding/embedding_table.h"

DEFINE_int64(rows, 50000000, "Rows the table grows to");
DEFINE_int32(dim, 16, "Floats a row");
DEFINE_string(measure_at, "1000000,50000000",
              "Row counts at which lookups and updates are timed (comma-separated; those past "
              "--rows are skipped)");
DEFINE_int32(ids, 8192, "Ids a request draws (before they are made unique)");
DEFINE_int32(requests, 2000, "Timed requests of each kind at each --measure_at point");
DEFINE_double(zipf_s, 1.05, "Exponent of the power law the ids follow (> 0, not 1)");
DEFINE_int32(repeats, 3, "Times each point's lookups and updates are timed, taking turns");

namespace pstrain {
namespace {

int64_t KeyAt(int64_t i) { return static_cast<int64_t>(SplitMix64(static_cast<uint64_t>(i))); }

double CpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// The requests of one point: unique keys each, as a worker sends them.
std::vector<std::vector<int64_t>> Requests(int64_t rows, uint64_t seed) {
  bench::PowerLawRanks ranks(rows, FLAGS_zipf_s, seed);
  std::vector<std::vector<int64_t>> requests(FLAGS_requests);
  for (auto& ids : requests) {
    ids.resize(FLAGS_ids);
    for (int64_t& id : ids) id = KeyAt(ranks.Next());
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  }
  return requests;
}

// Nanoseconds (wall) a random 64-byte line of a buffer of `bytes` takes
// to read, prefetched 32 reads ahead.
double RandomLineNanos(uint64_t bytes) {
  constexpr uint64_t kLine = 64;
  const uint64_t lines = bytes / kLine;
  auto buffer = MakeRandomReadArray<char>(lines * kLine);
  std::memset(buffer.get(), 1, lines * kLine);  // every page made before timing
  std::mt19937_64 rng(lines);
  std::vector<uint64_t> at(uint64_t{1} << 22);
  for (uint64_t& a : at) a = rng() % lines * kLine;
  constexpr size_t kAhead = 32;
  uint64_t sum = 0;
  const auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < at.size(); ++i) {
    if (i + kAhead < at.size()) Prefetch(buffer.get() + at[i + kAhead]);
    sum += static_cast<uint64_t>(buffer[at[i]]);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (sum == 0) std::printf("(no line read)\n");  // keeps the reads
  return 1e9 * seconds / static_cast<double>(at.size());
}

// Keys per CPU second of looking every request up, and of applying each.
struct Rates {
  double lookup = 0, apply = 0;
};
Rates Time(EmbeddingTable* table, const std::vector<std::vector<int64_t>>& requests, int64_t step) {
  int64_t keys = 0;
  for (const auto& ids : requests) keys += static_cast<int64_t>(ids.size());
  std::vector<float> out(static_cast<size_t>(FLAGS_ids) * FLAGS_dim);
  Rates rates;
  double start = CpuSeconds();
  for (const auto& ids : requests) table->Lookup(ids, out.data());
  rates.lookup = static_cast<double>(keys) / (CpuSeconds() - start);
  start = CpuSeconds();
  for (const auto& ids : requests) {
    SparseRows gradient;
    gradient.keys = ids;
    gradient.rows = Tensor({static_cast<int64_t>(ids.size()), FLAGS_dim});
    std::fill(gradient.rows.data(), gradient.rows.data() + gradient.rows.size(), 0.0f);
    const Status s = table->Apply(gradient, step);
    if (!s.ok()) {
      std::fprintf(stderr, "apply failed: %s\n", s.ToString().c_str());
      std::exit(1);
    }
  }
  rates.apply = static_cast<double>(keys) / (CpuSeconds() - start);
  return rates;
}

int Run() {
  std::vector<int64_t> measure_at;
  for (absl::string_view part : absl::StrSplit(FLAGS_measure_at, ',')) {
    int64_t n = 0;
    if (!absl::SimpleAtoi(part, &n) || n <= 0) {
      std::fprintf(stderr, "--measure_at: '%s' is not a positive row count\n",
                   std::string(part).c_str());
      return 1;
    }
    if (n <= FLAGS_rows) measure_at.push_back(n);
  }
  std::sort(measure_at.begin(), measure_at.end());

  proto::EmbeddingTableConfig config;
  config.set_name("hashed/embedding_weights");
  config.set_dim(FLAGS_dim);
  config.set_num_shards(1);
  config.set_shard(0);
  proto::OptimizerConfig optimizer;
  optimizer.set_name("Adagrad");
  optimizer.set_learning_rate(0.01f);
  MemoryBudget budget(UINT64_MAX);
  auto made = EmbeddingTable::Create(config, optimizer, "ps:0", &budget);
  if (!made.ok()) {
    std::fprintf(stderr, "%s\n", made.status().ToString().c_str());
    return 1;
  }
  EmbeddingTable* table = made.value().get();
  const int64_t stride = table->row_floats();
  constexpr int64_t kBatch = 65536;
  int64_t rows = 0;
  for (int64_t point : measure_at) {
    const uint64_t row_bytes = static_cast<uint64_t>(point * stride) * sizeof(float);
    std::printf("the machine: a random 64-byte line of %.0f MB (the rows' size) reads in %.1f ns\n",
                static_cast<double>(row_bytes) / 1e6, RandomLineNanos(row_bytes));
    while (rows < point) {
      EmbeddingTable::RowBlock block;
      const int64_t n = std::min(kBatch, point - rows);
      for (int64_t i = 0; i < n; ++i) block.keys.push_back(KeyAt(rows + i));
      block.values.assign(n * stride, 0.01f);
      const Status s = table->WriteRows(block, 1);
      if (!s.ok()) {
        std::fprintf(stderr, "grow failed: %s\n", s.ToString().c_str());
        return 1;
      }
      rows += n;
    }
    const auto requests = Requests(rows, static_cast<uint64_t>(point));
    double unique = 0;
    for (const auto& ids : requests) unique += static_cast<double>(ids.size());
    for (int r = 0; r < FLAGS_repeats; ++r) {
      const Rates rates = Time(table, requests, 2 + r);
      std::printf(
          "%lld rows, dim %d: %d requests of %.0f unique keys: lookup %.2f M keys per CPU s, "
          "apply %.2f M\n",
          static_cast<long long>(rows), FLAGS_dim, FLAGS_requests, unique / FLAGS_requests,
          rates.lookup / 1e6, rates.apply / 1e6);
      std::fflush(stdout);
    }
  }
  const EmbeddingTable::Stats stats = table->stats();
  std::printf("%lld rows hold %lld bytes: %.1f a row\n", static_cast<long long>(stats.rows),
              static_cast<long long>(stats.bytes),
              static_cast<double>(stats.bytes) / static_cast<double>(stats.rows));
  return 0;
}

}  // namespace
}  // namespace pstrain

int main(int argc, char** argv) {
  pstrain::InitToolMain(
      "embedding_table_bench [flags]: an embedding table's CPU per key as it grows", &argc, &argv);
  return pstrain::Run();
}
