// ps_server: one parameter-server task. Holds its share of the variables and
// applies pushed gradients until the chief tells it to shut down (exit 0); a
// stop signal before that exits 143 (core/task_main.h).
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "cluster/cluster_flags.h"
#include "core/descriptor_limit.h"
#include "core/stop_signals.h"
#include "core/task_main.h"
#include "ps/ps_core.h"
#include "ps/server/ps_server.h"
#include "ps/tcp/tensor_channel_server.h"
#include "ps/variable_store.h"

DEFINE_string(listen_host, "0.0.0.0",
              "Interface to listen on; the port comes from this task's address in the cluster "
              "spec");

DEFINE_uint64(max_memory_bytes, 0,
              "The most this ps holds: variables with their optimizer slots and moving "
              "averages; a request that would take it past this is refused (0: three quarters "
              "of the machine's memory)");

DEFINE_int32(tensor_port, 0,
             "Port of the tensor channel, on which workers and the chief push and pull over "
             "plain TCP (they learn it from the ps; 0: a free port, -1: none, tensors go over "
             "gRPC). Open it between pods where a network policy restricts ports");

DEFINE_int32(tensor_max_connections, 4096,
             "The most tensor channel connections this ps keeps open; past it a new one "
             "takes the place of an idle one (one that never sent a request first, then the "
             "one idle longest), and is refused only when all are busy");
DEFINE_int32(tensor_max_handshakes, 1024,
             "With TLS: tensor channel handshakes under way at once, each moved on by the event "
             "loop as its client's bytes come (none holds a thread); past it, the one that has "
             "waited longest for its client is dropped for the new one");
DEFINE_int32(tensor_max_connections_per_peer, 1024,
             "The same, for the connections from one address (or one local process)");
DEFINE_int32(request_threads, pstrain::PsServer::kRequestThreads,
             "Threads serving pushes, pulls and initializations, over the tensor channel and "
             "gRPC together; requests past them wait their turn. A pull waiting for a sync "
             "step holds none, so a few per core serve thousands of workers");
DEFINE_int32(tensor_max_requests_per_peer, 128,
             "Tensor channel requests of one address (or one local process) served at once: "
             "past it, its requests wait for its own to end (a pull waiting for a sync step "
             "is not being served)");
DEFINE_int32(tensor_gather_mib, 256,
             "MiB of tensor channel requests still coming in that the ps holds, all "
             "connections together (a request costs no thread until it is whole; each holds "
             "what it sent, at most its first MiB): past it, a request is served as it stands, "
             "its thread reading the rest");
DEFINE_int32(tensor_reply_mib, 256,
             "MiB of tensor channel replies the ps keeps to send as their clients read them, "
             "all connections together (a reply the socket does not take at once costs no "
             "thread): past it, a reply's thread waits for its client");
DEFINE_int32(tensor_idle_timeout_secs, 300,
             "A tensor channel connection with no request for this long is closed (clients "
             "open another when they need one)");
DEFINE_int32(request_part_timeout_secs, 60,
             "A push, initialization or row import whose next part (a gRPC message, a tensor "
             "channel frame) does not come within this is cut off (a push or initialization "
             "applies nothing of it); meanwhile it holds memory, not a serving thread");
DEFINE_int32(tensor_frame_timeout_secs, 10,
             "Once a frame of a request has begun, its bytes must all come within this, plus "
             "a second for every 16 MiB of tensor data; a slower sender is cut off");

namespace {

bool Positive(const char* flag, int32_t value) {
  if (value > 0) return true;
  std::fprintf(stderr, "--%s=%d: must be > 0\n", flag, value);
  return false;
}

bool ValidTensorPort(const char* flag, int32_t value) {
  if (value >= -1 && value <= 65535) return true;
  std::fprintf(stderr, "--%s=%d: a port, 0 for any free one, or -1 for none\n", flag, value);
  return false;
}

uint64_t ThreeQuartersOfMemory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return UINT64_MAX;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size) / 4 * 3;
}

}  // namespace

DEFINE_validator(tensor_port, &ValidTensorPort);
DEFINE_validator(tensor_max_connections, &Positive);
DEFINE_validator(tensor_max_connections_per_peer, &Positive);
DEFINE_validator(tensor_max_handshakes, &Positive);
DEFINE_validator(request_threads, &Positive);
DEFINE_validator(tensor_max_requests_per_peer, &Positive);
DEFINE_validator(tensor_gather_mib, &Positive);
DEFINE_validator(tensor_reply_mib, &Positive);
DEFINE_validator(tensor_idle_timeout_secs, &Positive);
DEFINE_validator(tensor_frame_timeout_secs, &Positive);
DEFINE_validator(request_part_timeout_secs, &Positive);

int main(int argc, char** argv) {
  pstrain::StopNotice stop;
  pstrain::HandleStopSignals(&stop);
  pstrain::InitTaskMain(
      "a pstrain parameter server.\n"
      "  ps_server --job=ps --task=0 --cluster_spec=cluster.json\n"
      "or, with no flags, from TF_CONFIG as Kubeflow's TFJob sets it.",
      &argc, &argv);

  const pstrain::cluster::ClusterConfig config =
      pstrain::cluster::ClusterConfigFromFlagsOrDie("ps");
  const std::string& address = config.spec.Address("ps", config.task.index);
  const std::string port = address.substr(address.rfind(':') + 1);
  pstrain::RaiseDescriptorLimit();  // a descriptor per tensor channel connection
  const uint64_t max_bytes =
      FLAGS_max_memory_bytes > 0 ? FLAGS_max_memory_bytes : ThreeQuartersOfMemory();
  pstrain::tcp::ChannelLimits limits;
  limits.max_connections = FLAGS_tensor_max_connections;
  limits.max_per_peer = FLAGS_tensor_max_connections_per_peer;
  limits.max_handshakes = FLAGS_tensor_max_handshakes;
  limits.max_requests_per_peer = FLAGS_tensor_max_requests_per_peer;
  limits.max_gathered_bytes = static_cast<uint64_t>(FLAGS_tensor_gather_mib) << 20;
  limits.max_kept_reply_bytes = static_cast<uint64_t>(FLAGS_tensor_reply_mib) << 20;
  limits.idle = std::chrono::seconds(FLAGS_tensor_idle_timeout_secs);
  limits.frames.idle = std::chrono::seconds(FLAGS_request_part_timeout_secs);
  limits.frames.frame = std::chrono::seconds(FLAGS_tensor_frame_timeout_secs);
  pstrain::VariableStore store(max_bytes);
  pstrain::PsCore core(config.task.index, pstrain::PsCore::NewIncarnation(), &store,
                       [&stop](const std::string& reason) { stop.Notify(reason); });
  auto server = pstrain::PsServer::Start(&core, FLAGS_listen_host + ":" + port, FLAGS_tensor_port,
                                         &limits, FLAGS_request_threads);
  // The address this task was given cannot be had: bad input, as a flag
  // naming a port in use is (the error names the address).
  if (!server.ok()) return pstrain::ExitWith(server.status(), pstrain::kExitBadInput);
  LOG(INFO) << "ps:" << config.task.index << " serving on port " << (*server)->port()
            << " (incarnation " << (*server)->incarnation() << ")"
            << ((*server)->tensor_port() > 0
                    ? ", tensor channel on port " + std::to_string((*server)->tensor_port())
                    : ", tensors over gRPC");
  const std::string reason = stop.Wait();
  LOG(INFO) << "ps:" << config.task.index << " shutting down: " << reason;
  (*server)->Stop();
  // The chief's shutdown ends the job; a signal before it is an eviction,
  // and the job needs this ps back.
  return stop.signal() > 0 ? pstrain::ExitStopped(stop) : pstrain::kExitDone;
}
