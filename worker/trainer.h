// Trainer: one worker's training loop against the ps tasks.
//
// Each step pulls every variable, runs the model forward and backward on the
// next batch of this worker's shard, and pushes the gradients (applied at
// once: asynchronous training). Stops when global_step reaches max_steps, when
// the input runs out (epochs), or when `stop` is notified.
//
// Thread-compatible: Run is called once, from one thread.
#ifndef PSTRAIN_WORKER_TRAINER_H_
#define PSTRAIN_WORKER_TRAINER_H_

#include <cstdint>

#include "core/status.h"
#include "core/stop_signals.h"
#include "data/batch_queue.h"
#include "nn/model.h"
#include "ps/rpc/ps_fleet.h"

namespace pstrain {

struct TrainerOptions {
  int worker_index = 0;
  int64_t max_steps = 0;  // 0: no limit (the input's epochs decide)
  int log_frequency = 10;
};

struct TrainerResult {
  int64_t local_steps = 0;
  int64_t global_step = 0;
  float first_loss = 0;
  float last_loss = 0;
};

class Trainer {
 public:
  // Borrows everything; all must outlive Run.
  Trainer(nn::Model* model, PsFleet* fleet, data::BatchQueue* input, const StopNotice* stop,
          const TrainerOptions& options);

  // InvalidArgument naming the step when the loss is NaN or Inf (nothing of
  // that step is pushed); the ps's error when a pull or push fails.
  StatusOr<TrainerResult> Run();

 private:
  nn::Model* const model_;
  PsFleet* const fleet_;
  data::BatchQueue* const input_;
  const StopNotice* const stop_;
  const TrainerOptions options_;
};

// "2026-11-21 10:00:00.123: step 120, loss = 2.31 (1432.1 examples/sec; 0.089 sec/batch)"
std::string ProgressLine(int64_t step, float loss, double examples_per_sec, double sec_per_batch);

}  // namespace pstrain

#endif  // PSTRAIN_WORKER_TRAINER_H_
