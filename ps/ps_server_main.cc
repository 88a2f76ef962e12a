// ps_server: one parameter-server task. Holds its share of the variables and
// applies pushed gradients until the chief tells it to shut down.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <unistd.h>

#include <cstdint>
#include <string>

#include "cluster/cluster_flags.h"
#include "core/stop_signals.h"
#include "core/task_main.h"
#include "ps/ps_server.h"

DEFINE_string(listen_host, "0.0.0.0",
              "Interface to listen on; the port comes from this task's address in the cluster "
              "spec");

DEFINE_uint64(max_memory_bytes, 0,
              "The most this ps holds: variables with their optimizer slots and moving "
              "averages; a request that would take it past this is refused (0: three quarters "
              "of the machine's memory)");

namespace {

uint64_t ThreeQuartersOfMemory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return UINT64_MAX;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size) / 4 * 3;
}

}  // namespace

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
  const uint64_t max_bytes =
      FLAGS_max_memory_bytes > 0 ? FLAGS_max_memory_bytes : ThreeQuartersOfMemory();
  auto server = pstrain::PsServer::Start(FLAGS_listen_host + ":" + port, config.task.index, &stop,
                                         max_bytes);
  // Retryable: the port may be free on the next try.
  if (!server.ok()) return pstrain::ExitWith(server.status(), pstrain::kExitRetryable);
  LOG(INFO) << "ps:" << config.task.index << " serving on port " << (*server)->port()
            << " (incarnation " << (*server)->incarnation() << ")";
  const std::string reason = stop.Wait();
  LOG(INFO) << "ps:" << config.task.index << " shutting down: " << reason;
  (*server)->Stop();
  return 0;
}
