// sparse_bench: embedding rows through one real ps_server process on
// loopback (docs/BENCHMARKS.md). The ps holds one table of --rows rows
// trained by Adagrad; this process pulls batches of --batch_keys unique
// keys, then pushes a gradient row for each, keys drawn uniformly or from a
// Zipf distribution (hot keys spread over the table by a fixed
// permutation), over the ps's tensor channel (its socket, or shared memory)
// or gRPC.
//
// For each row dimension and key distribution it prints, for pulls and
// for pushes apart: keys per second, the payload's GB/s (keys and rows),
// and the CPU microseconds per key of this process and of the ps (from
// /proc).
#include <gflags/gflags.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench/ps_processes.h"
#include "core/task_main.h"
#include "ps/embedding/sparse_rows.h"
#include "ps/rpc/ps_connections.h"

DEFINE_int64(rows, 10000000, "Rows in the table, all made before the measurement");
DEFINE_string(dims, "16,64", "Row dimensions to measure, comma-separated");
DEFINE_string(distributions, "uniform,zipf", "Key distributions: uniform, zipf");
DEFINE_double(zipf_s, 1.1, "The Zipf distribution's exponent");
DEFINE_int32(batch_keys, 4096, "Unique keys per pull and per push");
DEFINE_double(seconds, 3, "Measured wall time of pulls, then of pushes, per case");
DEFINE_string(transport, "channel",
              "channel (the ps's tensor channel, the default) or grpc (the ps started with "
              "--tensor_port=-1)");
DEFINE_bool(shared_memory, true,
            "Let the tensor channel carry the rows through shared memory (the ps is on this "
            "host); false: its socket alone");
DEFINE_string(ps_server, "", "Path of the ps_server binary; empty: <build>/ps/ps_server");
DEFINE_bool(show_ps_output, false, "Copy the ps process's log lines to stderr");

namespace pstrain {
namespace {

constexpr char kTable[] = "embedding/embedding_weights";
constexpr int64_t kFillKeys = 65536;  // keys per push while the table is made

StatusOr<std::vector<std::string>> Split(const std::string& text, const std::string& flag) {
  std::vector<std::string> items;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) items.push_back(item);
  }
  if (items.empty()) return InvalidArgument("--" + flag + " is empty");
  return items;
}

// Batches of unique keys in [0, rows). Zipf ranks are drawn by inverting the
// cumulative distribution (a table of `rows` doubles) and mapped to keys by
// a multiplication modulo rows, so the hottest keys are not neighbours.
class KeyBatches {
 public:
  KeyBatches(const std::string& distribution, int64_t rows, int batch, uint64_t seed)
      : rows_(rows), batch_(batch), zipf_(distribution == "zipf"), rng_(seed) {
    if (!zipf_) return;
    cdf_.resize(rows);
    double sum = 0;
    for (int64_t r = 0; r < rows; ++r) cdf_[r] = sum += std::pow(double(r + 1), -FLAGS_zipf_s);
    for (double& c : cdf_) c /= sum;
  }

  std::vector<int64_t> Next() {
    std::vector<int64_t> draws;
    while (static_cast<int64_t>(draws.size()) < 4 * int64_t{batch_}) draws.push_back(Draw());
    UniqueKeys unique = Unique(draws.data(), static_cast<int64_t>(draws.size()));
    while (static_cast<int>(unique.keys.size()) < batch_) {
      draws.push_back(Draw());
      unique = Unique(draws.data(), static_cast<int64_t>(draws.size()));
    }
    unique.keys.resize(batch_);
    return unique.keys;
  }

 private:
  int64_t Draw() {
    if (!zipf_) return std::uniform_int_distribution<int64_t>(0, rows_ - 1)(rng_);
    const double u = std::uniform_real_distribution<double>(0, 1)(rng_);
    const int64_t rank = std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin();
    // 1000003 is prime and divides no power of ten: a bijection of [0, rows).
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

proto::PushHeader PushOf(const std::vector<int64_t>& keys) {
  proto::PushHeader h;
  h.set_worker(0);
  *h.add_sparse() = proto::TableKeys();
  h.mutable_sparse(0)->set_table(kTable);
  h.mutable_sparse(0)->set_keys(EncodeKeys(keys));
  return h;
}

Status MakeTable(PsConnection* ps, int dim) {
  proto::InitHeader header;
  header.mutable_optimizer()->set_name("Adagrad");
  header.mutable_optimizer()->set_learning_rate(0.01f);
  header.set_num_workers(1);
  proto::EmbeddingTableConfig* table = header.add_tables();
  table->set_name(kTable);
  table->set_dim(dim);
  table->set_num_shards(1);
  PS_RETURN_IF_ERROR(ps->Init(header, {}));
  std::vector<int64_t> keys;
  Tensor rows({kFillKeys, dim});
  for (int64_t first = 0; first < FLAGS_rows; first += kFillKeys) {
    keys.clear();
    for (int64_t k = first; k < std::min(FLAGS_rows, first + kFillKeys); ++k) keys.push_back(k);
    Tensor part = Tensor::View({static_cast<int64_t>(keys.size()), dim}, rows.data());
    PS_RETURN_IF_ERROR(ps->Push(PushOf(keys), {{kTable, &part}}).status());
  }
  return OkStatus();
}

struct Phase {
  int64_t keys = 0;
  double seconds = 0, client_cpu = 0, ps_cpu = 0;
};

// Runs `op` on the batches in turn for FLAGS_seconds; what it moved and
// what it cost.
template <typename Op>
StatusOr<Phase> Measure(const std::vector<std::vector<int64_t>>& batches, Op op) {
  for (int i = 0; i < 3; ++i) PS_RETURN_IF_ERROR(op(batches[i % batches.size()]));  // warm up
  Phase p;
  const bench::CpuSample c0 = bench::SampleCpu();
  size_t i = 0;
  while (p.seconds < FLAGS_seconds) {
    const std::vector<int64_t>& keys = batches[i++ % batches.size()];
    PS_RETURN_IF_ERROR(op(keys));
    p.keys += static_cast<int64_t>(keys.size());
    p.seconds = std::chrono::duration<double>(bench::Clock::now() - c0.when).count();
  }
  const bench::CpuSample c1 = bench::SampleCpu();
  p.client_cpu = c1.self_sec - c0.self_sec;
  p.ps_cpu = c1.ps_sec - c0.ps_sec;
  return p;
}

void Print(int dim, const std::string& distribution, const char* op, const Phase& p) {
  const double bytes_per_key = 8.0 + 4.0 * dim;
  std::printf("%4d %-8s %-5s %12.0f %8.3f %14.3f %10.3f\n", dim, distribution.c_str(), op,
              p.keys / p.seconds, p.keys * bytes_per_key / p.seconds / 1e9,
              p.client_cpu * 1e6 / p.keys, p.ps_cpu * 1e6 / p.keys);
  std::fflush(stdout);
}

Status Run() {
  PS_ASSIGN_OR_RETURN(std::vector<std::string> dims, Split(FLAGS_dims, "dims"));
  PS_ASSIGN_OR_RETURN(std::vector<std::string> distributions,
                      Split(FLAGS_distributions, "distributions"));
  for (const std::string& d : distributions) {
    if (d != "uniform" && d != "zipf") {
      return InvalidArgument("--distributions: '" + d + "' is neither uniform nor zipf");
    }
  }
  if (FLAGS_transport != "channel" && FLAGS_transport != "grpc") {
    return InvalidArgument("--transport=" + FLAGS_transport + ": channel or grpc");
  }
  if (FLAGS_rows < FLAGS_batch_keys || FLAGS_batch_keys < 1 || FLAGS_batch_keys > kFillKeys) {
    return InvalidArgument("--batch_keys must be in [1, 65536] and at most --rows");
  }
  const std::string dir =
      std::filesystem::temp_directory_path() / ("sparse_bench." + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  bench::PsProcesses ps;
  std::vector<std::string> ps_args;
  if (FLAGS_transport == "grpc") ps_args.push_back("--tensor_port=-1");
  PS_RETURN_IF_ERROR(
      ps.Start(bench::PsServerPath(FLAGS_ps_server), 1, dir, FLAGS_show_ps_output, ps_args));
  PsClientOptions options;
  options.shared_memory = FLAGS_shared_memory;
  PsConnections connected = ConnectToPs(bench::SpecFor(ps.ports(), 1), options);
  PsConnection* client = connected.connections.at(0).get();
  Status up = client->GetStatus(std::chrono::seconds(30)).status();
  if (!up.ok()) return up.Annotate("waiting for the ps");

  std::printf("transport: %s; %lld rows, Adagrad, %d unique keys a request\n",
              FLAGS_transport == "grpc" ? "gRPC"
              : FLAGS_shared_memory     ? "tensor channel through shared memory"
                                        : "tensor channel, its socket alone",
              static_cast<long long>(FLAGS_rows), FLAGS_batch_keys);
  std::printf("%4s %-8s %-5s %12s %8s %14s %10s\n", "dim", "keys", "op", "keys/s", "GB/s",
              "client us/key", "ps us/key");
  for (const std::string& d : dims) {
    const int dim = std::atoi(d.c_str());
    if (dim < 1 || dim > 4096) return InvalidArgument("--dims: '" + d + "' is not in [1, 4096]");
    const auto t0 = bench::Clock::now();
    PS_RETURN_IF_ERROR(MakeTable(client, dim));
    const double made_secs = std::chrono::duration<double>(bench::Clock::now() - t0).count();
    PS_ASSIGN_OR_RETURN(proto::StatusResponse st, client->GetStatus(std::chrono::seconds(10)));
    if (st.tables_size() != 1 || st.tables(0).rows() != FLAGS_rows) {
      return Internal("the ps holds no table of " + std::to_string(FLAGS_rows) + " rows");
    }
    std::fprintf(stderr,
                 "dim %d: %lld rows made in %.1f s; the ps holds %.1f bytes a row (values and "
                 "Adagrad's accumulator: %d)\n",
                 dim, static_cast<long long>(FLAGS_rows), made_secs,
                 static_cast<double>(st.tables(0).bytes()) / FLAGS_rows, 2 * 4 * dim);
    Tensor grad({FLAGS_batch_keys, dim});
    grad.Fill(0.01f);
    for (const std::string& distribution : distributions) {
      KeyBatches draw(distribution, FLAGS_rows, FLAGS_batch_keys, 17);
      std::vector<std::vector<int64_t>> batches;
      for (int i = 0; i < 64; ++i) batches.push_back(draw.Next());
      std::map<std::string, Tensor> out;
      PS_ASSIGN_OR_RETURN(Phase pull, Measure(batches, [&](const std::vector<int64_t>& keys) {
                            proto::TableKeys lookup;
                            lookup.set_table(kTable);
                            lookup.set_keys(EncodeKeys(keys));
                            return client->PullWithRows(0, {}, {lookup}, &out, nullptr, 0,
                                                        std::chrono::milliseconds(0));
                          }));
      Print(dim, distribution, "pull", pull);
      PS_ASSIGN_OR_RETURN(Phase push, Measure(batches, [&](const std::vector<int64_t>& keys) {
                            return client->Push(PushOf(keys), {{kTable, &grad}}).status();
                          }));
      Print(dim, distribution, "push", push);
    }
  }
  ps.Stop();
  std::filesystem::remove_all(dir);
  return OkStatus();
}

}  // namespace
}  // namespace pstrain

int main(int argc, char** argv) {
  pstrain::InitTaskMain(
      "sparse_bench [--rows=10000000] [--dims=16,64] [--distributions=uniform,zipf]\n"
      "Pulls and Adagrad pushes of unique embedding keys through a real ps_server on loopback:\n"
      "keys/s, GB/s and CPU us per key on each side.",
      &argc, &argv);
  return pstrain::RunTool(argc, argv, pstrain::Run);
}
