// SimulatedWorker: what a worker process does to the ps tasks, as a thread:
// its own PsFleet and connections (through an address of its own,
// 127.0.X.Y, so that no connection is shared with another worker, and
// over TCP, as from another host: no shared memory with the ps), a
// HeartbeatSender to ps:0 every second, and a loop of pull, a pause in
// place of computing, and push of gradients of the job's variables (sync:
// each pull waits for the step after the one it pushed to), then
// WorkerDone. With an embedding table in the layout, each step also draws
// ids from a power law (bench/power_law.h) and pulls and pushes their
// rows in the same requests, as a Trainer does. What the workers see is
// added up in WorkerTally.
#ifndef PSTRAIN_BENCH_SCALE_SIMULATED_WORKER_H_
#define PSTRAIN_BENCH_SCALE_SIMULATED_WORKER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bench/power_law.h"
#include "core/status.h"
#include "core/tensor.h"
#include "ps/client/ps_fleet.h"

namespace pstrain {
namespace bench {

// What every worker thread adds up.
struct WorkerTally {
  std::atomic<bool> stop{false};
  std::atomic<int> pulled{0};      // workers past their first pull
  std::atomic<int> stepped{0};     // workers with a push applied
  std::atomic<int64_t> pushes{0};  // pushes applied, all workers
  std::atomic<int64_t> rows{0};    // rows those pushes carried (unique ids)
  // Records cycle times (pull + push) while set: the window.
  std::atomic<bool> measuring{false};

  void Count(const Status& s);
  void Cycle(std::chrono::duration<double> seconds);
  // Failed calls by code, and the first message of each.
  std::map<std::string, int64_t> errors() const;
  std::map<std::string, std::string> examples() const;
  // The cycles recorded since the last call, in ms.
  std::vector<double> TakeCycles();

 private:
  mutable std::mutex mu_;
  std::map<std::string, int64_t> errors_;
  std::map<std::string, std::string> examples_;
  std::vector<double> cycles_ms_;
};

class SimulatedWorker {
 public:
  struct Options {
    int index = 0;
    bool sync = false;
    // A sync pull's wait for its step: a worker's --step_timeout_secs.
    std::chrono::milliseconds pull_wait{30000};
    // Between a pull and its push, in place of forward and backward.
    std::chrono::milliseconds compute{0};
    // With a table in the layout: ids a step draws (before they are made
    // unique), over the table's vocabulary, by a power law of exponent
    // zipf_s.
    int ids_per_step = 1024;
    double zipf_s = 1.05;
  };
  SimulatedWorker(const Options& options, const std::vector<int>& ps_ports,
                  const PsFleet::Layout& layout, WorkerTally* tally);

  // Until tally->stop; then WorkerDone, as a finished worker reports.
  void Run();

 private:
  // A step's ids: drawn, made unique and split by ps, with a gradient row
  // for each.
  void DrawIds();

  const Options options_;
  std::unique_ptr<PsFleet> fleet_;
  WorkerTally* const tally_;
  std::vector<Tensor> grads_;
  // The table's step (empty without a table) and its rows' gradients.
  std::vector<PsFleet::TableStep> tables_;
  std::vector<Tensor> row_grads_;
  std::unique_ptr<PowerLawRanks> ranks_;
};

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_SCALE_SIMULATED_WORKER_H_
