// sparse_scale: an embedding table at scale through real ps_server
// processes (docs/BENCHMARKS.md). A hashed table (int64 keys of any value)
// grows to --rows rows of --dim floats, trained by Adagrad, over --save_ps
// ps tasks each held to --max_memory_bytes; the chief's checkpoint code
// saves it block by block and restores it onto --restore_ps ps tasks, and
// every row is compared; then the first cluster is pushed new keys until a
// push is refused, which must name the table and the ps and change nothing.
// Prints what each stage took and the bytes each ps holds a row. As the
// table grows past each of --measure_at, a worker's traffic is timed on
// it: requests of --zipf_ids ids drawn from a power law (--zipf_s) over
// the rows there are, made unique, pulled and then pushed, with the ps
// tasks' CPU seconds, so keys/s per ps core shows whether the table's size
// costs.
#include <gflags/gflags.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "bench/power_law.h"
#include "bench/ps_processes.h"
#include "bench/quantile.h"
#include "chief/checkpoint.h"
#include "chief/table_checkpoints.h"
#include "cluster/key_partition.h"
#include "core/splitmix64.h"
#include "core/task_main.h"
#include "ps/embedding/sparse_rows.h"
#include "ps/rpc/ps_connections.h"

DEFINE_int64(rows, 20000000, "Rows the table grows to");
DEFINE_int32(dim, 16, "Floats a row");
DEFINE_int32(save_ps, 2, "ps tasks the table grows on and is saved from");
DEFINE_int32(restore_ps, 3, "ps tasks the checkpoint is restored onto");
DEFINE_int64(max_memory_bytes, 1800000000, "--max_memory_bytes of every ps task");
DEFINE_string(dir, "", "Where the checkpoint goes; empty: a new folder under /tmp, removed after");
DEFINE_string(ps_server, "", "Path of the ps_server binary; empty: <build>/ps/ps_server");
DEFINE_string(measure_at, "1000000,10000000",
              "Row counts at which pull and push keys/s are timed as the table grows "
              "(comma-separated; those past --rows are skipped)");
DEFINE_int32(zipf_ids, 8192, "Ids a timed request draws (before they are made unique)");
DEFINE_int32(zipf_requests, 1000, "Timed requests at each --measure_at point");
DEFINE_double(zipf_s, 1.05, "Exponent of the power law the timed ids follow (> 0, not 1)");

namespace pstrain {
namespace {

constexpr char kTable[] = "hashed/embedding_weights";
constexpr int64_t kBatch = 65536;

using Clock = bench::Clock;
double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// The i-th key: any int64 (a hashed id).
int64_t KeyAt(int64_t i) { return static_cast<int64_t>(SplitMix64(static_cast<uint64_t>(i))); }

struct Cluster {
  bench::PsProcesses processes;
  std::unique_ptr<PsFleet> fleet;
};

// The table alone, over num_ps ps tasks.
StatusOr<PsFleet::Layout> TableLayout(int num_ps) {
  PsFleet::Layout layout;
  PS_ASSIGN_OR_RETURN(layout.placement, cluster::ComputePlacement(
                                            {}, num_ps, cluster::PlacementStrategy::kGreedy, 1));
  proto::EmbeddingTableConfig table;
  table.set_name(kTable);
  table.set_dim(FLAGS_dim);
  layout.tables.push_back(table);
  return layout;
}

Status StartCluster(int num_ps, const std::string& dir, Cluster* c) {
  std::filesystem::create_directories(dir);
  PS_RETURN_IF_ERROR(
      c->processes.Start(bench::PsServerPath(FLAGS_ps_server), num_ps, dir, false,
                         {"--max_memory_bytes=" + std::to_string(FLAGS_max_memory_bytes)}));
  PS_ASSIGN_OR_RETURN(PsFleet::Layout layout, TableLayout(num_ps));
  c->fleet = ConnectFleet(bench::SpecFor(c->processes.ports(), 1), std::move(layout));
  PS_RETURN_IF_ERROR(c->fleet->WaitForPs(false, nullptr, std::chrono::seconds(30)));
  proto::InitHeader header;
  header.mutable_optimizer()->set_name("Adagrad");
  header.mutable_optimizer()->set_learning_rate(0.05f);
  header.set_num_workers(1);
  return c->fleet->InitVariables({}, header);
}

// Keys [first, first + n) split by the ps that holds them.
std::vector<std::vector<int64_t>> ByPs(int64_t first, int64_t n, int num_ps) {
  std::vector<std::vector<int64_t>> out(num_ps);
  for (int64_t i = first; i < first + n; ++i) {
    const int64_t key = KeyAt(i);
    out[KeyShard(key, num_ps)].push_back(key);
  }
  return out;
}

// A gradient for each of keys [first, first + n): a row that depends on
// the key, so that rows differ.
Status PushRows(PsFleet* fleet, int64_t first, int64_t n) {
  const auto by_ps = ByPs(first, n, fleet->num_ps());
  for (int ps = 0; ps < fleet->num_ps(); ++ps) {
    const std::vector<int64_t>& keys = by_ps[ps];
    if (keys.empty()) continue;
    proto::PushHeader h;
    h.set_placement_fingerprint(fleet->placement().fingerprint);
    proto::TableKeys* t = h.add_sparse();
    t->set_table(kTable);
    t->set_keys(EncodeKeys(keys));
    Tensor rows({static_cast<int64_t>(keys.size()), FLAGS_dim});
    for (size_t k = 0; k < keys.size(); ++k) {
      for (int d = 0; d < FLAGS_dim; ++d) {
        rows[static_cast<int64_t>(k) * FLAGS_dim + d] =
            static_cast<float>((static_cast<uint64_t>(keys[k]) >> (d % 32)) % 97) / 97.0f - 0.5f;
      }
    }
    PS_RETURN_IF_ERROR(fleet->client(ps)->Push(h, {{kTable, &rows}}).status());
  }
  return OkStatus();
}

// Each key's row in keys [first, first + n), in key order.
StatusOr<std::vector<float>> PullRows(PsFleet* fleet, int64_t first, int64_t n) {
  const auto by_ps = ByPs(first, n, fleet->num_ps());
  std::map<int64_t, const float*> row_of;
  std::vector<std::map<std::string, Tensor>> got(fleet->num_ps());
  for (int ps = 0; ps < fleet->num_ps(); ++ps) {
    proto::TableKeys lookup;
    lookup.set_table(kTable);
    lookup.set_keys(EncodeKeys(by_ps[ps]));
    PS_RETURN_IF_ERROR(fleet->client(ps)->PullWithRows(fleet->placement().fingerprint, {}, {lookup},
                                                       &got[ps], nullptr, 0,
                                                       std::chrono::milliseconds(0)));
    for (size_t k = 0; k < by_ps[ps].size(); ++k) {
      row_of[by_ps[ps][k]] = got[ps][kTable].data() + k * FLAGS_dim;
    }
  }
  std::vector<float> out;
  out.reserve(n * FLAGS_dim);
  for (int64_t i = first; i < first + n; ++i) {
    const float* row = row_of.at(KeyAt(i));
    out.insert(out.end(), row, row + FLAGS_dim);
  }
  return out;
}

double PsCpuSec(const Cluster& c) {
  double sec = 0;
  for (int pid : c.processes.pids())
    sec += bench::ProcessCpuSec(std::to_string(pid), nullptr, nullptr);
  return sec;
}

// A worker's request: per ps, the keys it asks of that ps.
using ZipfRequest = std::vector<proto::TableKeys>;

// `count` requests of --zipf_ids ids each over the table's first `rows`
// keys, made unique and split by ps; *keys_total (may be null) gets the
// unique keys of them all.
std::vector<ZipfRequest> ZipfRequests(int num_ps, int64_t rows, int count, uint64_t seed,
                                      int64_t* keys_total) {
  // Rank r is the r-th key grown (KeyAt), so the hot keys spread over the
  // ps tasks.
  bench::PowerLawRanks ranks(rows, FLAGS_zipf_s, seed);
  std::vector<ZipfRequest> requests(count);
  if (keys_total != nullptr) *keys_total = 0;
  for (auto& request : requests) {
    std::vector<int64_t> ids(FLAGS_zipf_ids);
    for (int64_t& id : ids) id = KeyAt(ranks.Next());
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    if (keys_total != nullptr) *keys_total += static_cast<int64_t>(ids.size());
    std::vector<std::vector<int64_t>> by_ps(num_ps);
    for (int64_t id : ids) by_ps[KeyShard(id, num_ps)].push_back(id);
    request.resize(num_ps);
    for (int ps = 0; ps < num_ps; ++ps) {
      request[ps].set_table(kTable);
      request[ps].set_keys(EncodeKeys(by_ps[ps]));
    }
  }
  return requests;
}

// --zipf_requests requests over the table's first `rows` keys: every
// request's pull, then every request's push of a gradient for the same
// keys, each phase timed whole (the ps tasks' CPU seconds come in 10 ms
// ticks). Prints keys/s and keys per ps CPU second of each.
Status TimeZipfTraffic(Cluster* c, int64_t rows) {
  PsFleet* fleet = c->fleet.get();
  const int num_ps = fleet->num_ps();
  int64_t keys_total = 0;
  const std::vector<ZipfRequest> requests =
      ZipfRequests(num_ps, rows, FLAGS_zipf_requests, static_cast<uint64_t>(rows), &keys_total);
  // The rows each request pulled: the gradients it pushes.
  std::vector<std::vector<std::map<std::string, Tensor>>> got(
      requests.size(), std::vector<std::map<std::string, Tensor>>(num_ps));
  const double cpu0 = PsCpuSec(*c);
  auto t0 = Clock::now();
  for (size_t r = 0; r < requests.size(); ++r) {
    for (int ps = 0; ps < num_ps; ++ps) {
      PS_RETURN_IF_ERROR(fleet->client(ps)->PullWithRows(fleet->placement().fingerprint, {},
                                                         {requests[r][ps]}, &got[r][ps], nullptr, 0,
                                                         std::chrono::milliseconds(0)));
    }
  }
  const double pull_sec = Since(t0);
  const double cpu1 = PsCpuSec(*c);
  t0 = Clock::now();
  for (size_t r = 0; r < requests.size(); ++r) {
    for (int ps = 0; ps < num_ps; ++ps) {
      proto::PushHeader h;
      h.set_placement_fingerprint(fleet->placement().fingerprint);
      *h.add_sparse() = requests[r][ps];
      PS_RETURN_IF_ERROR(fleet->client(ps)->Push(h, {{kTable, &got[r][ps][kTable]}}).status());
    }
  }
  const double push_sec = Since(t0);
  const double pull_cpu = cpu1 - cpu0, push_cpu = PsCpuSec(*c) - cpu1;
  const double n = static_cast<double>(keys_total);
  std::printf(
      "  at %lld rows: %d requests of %d ids (s=%.2f), %.0f unique each; pull %.0f keys/s "
      "(%.0f per ps CPU second), push %.0f keys/s (%.0f per ps CPU second)\n",
      static_cast<long long>(rows), FLAGS_zipf_requests, FLAGS_zipf_ids, FLAGS_zipf_s,
      n / FLAGS_zipf_requests, n / pull_sec, pull_cpu > 0 ? n / pull_cpu : 0.0, n / push_sec,
      push_cpu > 0 ? n / push_cpu : 0.0);
  std::fflush(stdout);
  return OkStatus();
}

// A worker's step on the table: the request's rows pulled from every ps,
// then a gradient of zeros pushed for them: all of a push's work, which
// leaves Adagrad's rows as they were (so that the save that runs beside
// it is compared with the rows after it).
Status Round(PsFleet* fleet, const ZipfRequest& request) {
  for (int ps = 0; ps < fleet->num_ps(); ++ps) {
    std::map<std::string, Tensor> got;
    PS_RETURN_IF_ERROR(fleet->client(ps)->PullWithRows(fleet->placement().fingerprint, {},
                                                       {request[ps]}, &got, nullptr, 0,
                                                       std::chrono::milliseconds(0)));
    proto::PushHeader h;
    h.set_placement_fingerprint(fleet->placement().fingerprint);
    *h.add_sparse() = request[ps];
    Tensor& zeros = got[kTable];
    zeros.Fill(0.0f);
    PS_RETURN_IF_ERROR(fleet->client(ps)->Push(h, {{kTable, &zeros}}).status());
  }
  return OkStatus();
}

// Rounds over `requests` in turn, each one's ms to *ms, until `rounds` are
// done or, with rounds = 0, until *stop.
Status Rounds(PsFleet* fleet, const std::vector<ZipfRequest>& requests, int rounds,
              const std::atomic<bool>* stop, std::vector<double>* ms) {
  for (size_t r = 0; rounds > 0 ? ms->size() < static_cast<size_t>(rounds) : !stop->load(); ++r) {
    const auto t0 = Clock::now();
    PS_RETURN_IF_ERROR(Round(fleet, requests[r % requests.size()]));
    ms->push_back(1e3 * Since(t0));
  }
  return OkStatus();
}

std::string Quantiles(std::vector<double> ms) {
  if (ms.empty()) return "no round";
  char line[160];
  std::snprintf(line, sizeof(line), "%zu rounds, p50 %.1f ms, p99 %.1f ms, max %.1f ms", ms.size(),
                bench::Quantile(&ms, 0.5), bench::Quantile(&ms, 0.99),
                *std::max_element(ms.begin(), ms.end()));
  return line;
}

// Rows and bytes over every ps of the fleet, and the most bytes a row one
// ps holds.
Status Report(PsFleet* fleet, const char* what) {
  for (int ps = 0; ps < fleet->num_ps(); ++ps) {
    PS_ASSIGN_OR_RETURN(proto::StatusResponse st,
                        fleet->client(ps)->GetStatus(std::chrono::seconds(10)));
    if (st.tables_size() != 1) return Internal("ps:" + std::to_string(ps) + " holds no table");
    const proto::TableState& t = st.tables(0);
    std::printf(
        "  %s ps:%d: %lld rows, %.2f GB, %.1f bytes a row (values and Adagrad's "
        "accumulator: %d)\n",
        what, ps, static_cast<long long>(t.rows()), t.bytes() / 1e9,
        t.rows() > 0 ? static_cast<double>(t.bytes()) / t.rows() : 0.0, 8 * FLAGS_dim);
  }
  std::fflush(stdout);
  return OkStatus();
}

Status Run() {
  const bool own_dir = FLAGS_dir.empty();
  const std::string dir =
      own_dir
          ? (std::filesystem::temp_directory_path() / ("sparse_scale." + std::to_string(getpid())))
                .string()
          : FLAGS_dir;
  std::filesystem::create_directories(dir);
  std::printf(
      "a hashed table of %lld rows of %d floats, Adagrad; %d ps tasks, then %d; "
      "--max_memory_bytes=%lld each\n",
      static_cast<long long>(FLAGS_rows), FLAGS_dim, FLAGS_save_ps, FLAGS_restore_ps,
      static_cast<long long>(FLAGS_max_memory_bytes));
  Cluster first;
  PS_RETURN_IF_ERROR(StartCluster(FLAGS_save_ps, dir + "/ps-first", &first));
  PS_ASSIGN_OR_RETURN(std::vector<int> points,
                      bench::ParseIntList("measure_at", FLAGS_measure_at, 1, 2000000000));
  std::vector<int64_t> measure_at;
  for (int v : points) {
    if (v <= FLAGS_rows) measure_at.push_back(v);
  }
  std::sort(measure_at.begin(), measure_at.end());
  if (FLAGS_zipf_s <= 0 || FLAGS_zipf_s == 1.0) return InvalidArgument("--zipf_s: > 0, not 1");
  auto t0 = Clock::now();
  double timing = 0;  // seconds spent timing traffic, not growing
  size_t next_measure = 0;
  for (int64_t i = 0; i < FLAGS_rows;) {
    int64_t n = std::min(kBatch, FLAGS_rows - i);
    if (next_measure < measure_at.size()) n = std::min(n, measure_at[next_measure] - i);
    PS_RETURN_IF_ERROR(PushRows(first.fleet.get(), i, n));
    i += n;
    if (next_measure < measure_at.size() && i == measure_at[next_measure]) {
      const auto m0 = Clock::now();
      PS_RETURN_IF_ERROR(TimeZipfTraffic(&first, i));
      timing += Since(m0);
      ++next_measure;
    }
  }
  std::printf("grew to %lld rows in %.1f s\n", static_cast<long long>(FLAGS_rows),
              Since(t0) - timing);
  PS_RETURN_IF_ERROR(Report(first.fleet.get(), "grown"));

  // The pause a save causes to training: a worker on connections of its
  // own steps on the table (a request's pull and push, one after another)
  // before the save and while it runs.
  PS_ASSIGN_OR_RETURN(PsFleet::Layout layout, TableLayout(FLAGS_save_ps));
  auto worker = ConnectFleet(bench::SpecFor(first.processes.ports(), 1), std::move(layout));
  PS_RETURN_IF_ERROR(worker->WaitForPs(false, nullptr, std::chrono::seconds(30)));
  const std::vector<ZipfRequest> steps =
      ZipfRequests(FLAGS_save_ps, FLAGS_rows, 64, /*seed=*/1, nullptr);
  std::vector<double> before_ms, during_ms;
  PS_RETURN_IF_ERROR(Rounds(worker.get(), steps, 200, nullptr, &before_ms));
  PS_ASSIGN_OR_RETURN(auto writer, CheckpointWriter::Create(dir, 1));
  std::atomic<bool> saved{false};
  Status stepped;
  std::thread stepping([&] { stepped = Rounds(worker.get(), steps, 0, &saved, &during_ms); });
  t0 = Clock::now();
  Status save = SaveTables(first.fleet.get(), writer.get(), false, false);
  StatusOr<std::string> finished = save.ok() ? writer->Finish() : StatusOr<std::string>(save);
  const double save_sec = Since(t0);
  saved.store(true);
  stepping.join();
  PS_RETURN_IF_ERROR(finished.status());
  PS_RETURN_IF_ERROR(stepped);
  const std::string prefix = *finished;
  std::printf(
      "a worker's step (a pull and push of %d ids' rows) before the save: %s; during it: %s\n",
      FLAGS_zipf_ids, Quantiles(before_ms).c_str(), Quantiles(during_ms).c_str());
  const double rows_gb = std::filesystem::file_size(prefix + ".rows") / 1e9;
  std::printf("saved %s in %.1f s (%.2f GB of rows, %.0f MB/s per ps)\n", prefix.c_str(), save_sec,
              rows_gb, rows_gb * 1e3 / save_sec / FLAGS_save_ps);

  Cluster second;
  PS_RETURN_IF_ERROR(StartCluster(FLAGS_restore_ps, dir + "/ps-second", &second));
  t0 = Clock::now();
  PS_ASSIGN_OR_RETURN(Checkpoint ckpt, ReadCheckpoint(prefix));
  PS_RETURN_IF_ERROR(RestoreTables(second.fleet.get(), ckpt, nullptr));
  const double restore_sec = Since(t0);
  std::printf("restored onto %d ps tasks in %.1f s (%.0f MB/s of the file, %.0f MB/s per ps)\n",
              FLAGS_restore_ps, restore_sec, rows_gb * 1e3 / restore_sec,
              rows_gb * 1e3 / restore_sec / FLAGS_restore_ps);
  PS_RETURN_IF_ERROR(Report(second.fleet.get(), "restored"));

  t0 = Clock::now();
  int64_t differing = 0;
  for (int64_t i = 0; i < FLAGS_rows; i += kBatch) {
    const int64_t n = std::min(kBatch, FLAGS_rows - i);
    PS_ASSIGN_OR_RETURN(std::vector<float> a, PullRows(first.fleet.get(), i, n));
    PS_ASSIGN_OR_RETURN(std::vector<float> b, PullRows(second.fleet.get(), i, n));
    for (int64_t k = 0; k < n; ++k) {
      differing += std::memcmp(&a[k * FLAGS_dim], &b[k * FLAGS_dim], FLAGS_dim * 4) != 0;
    }
  }
  std::printf("compared every row in %.1f s: %lld of %lld differ\n", Since(t0),
              static_cast<long long>(differing), static_cast<long long>(FLAGS_rows));
  second.processes.Stop();

  // New keys until a push is refused.
  t0 = Clock::now();
  Status refused = OkStatus();
  int64_t next = FLAGS_rows;
  while (refused.ok() && next < 4 * FLAGS_rows) {
    refused = PushRows(first.fleet.get(), next, kBatch);
    if (refused.ok()) next += kBatch;
  }
  std::printf("after %lld more keys (%.1f s), a push was refused: %s\n",
              static_cast<long long>(next - FLAGS_rows), Since(t0), refused.ToString().c_str());
  PS_RETURN_IF_ERROR(Report(first.fleet.get(), "full"));
  first.processes.Stop();
  if (own_dir) std::filesystem::remove_all(dir);
  if (differing != 0) return Internal("restored rows differ");
  if (refused.code() != Code::kResourceExhausted ||
      refused.message().find(std::string("embedding table ") + kTable) == std::string::npos) {
    return Internal("no push was refused for the table's memory");
  }
  return OkStatus();
}

}  // namespace
}  // namespace pstrain

int main(int argc, char** argv) {
  pstrain::InitTaskMain(
      "sparse_scale [--rows=20000000] [--dim=16] [--save_ps=2] [--restore_ps=3]\n"
      "An embedding table grown, saved, restored onto another number of ps tasks, compared,\n"
      "and pushed past --max_memory_bytes, through real ps_server processes.",
      &argc, &argv);
  return pstrain::RunTool(argc, argv, pstrain::Run);
}
