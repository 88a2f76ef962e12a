// The worker's flags (what worker --help lists under worker/worker_flags.cc),
// the Trainer's parsed and checked once, so that the worker's main only
// wires parts together and the checks are tested without starting a
// process.
#ifndef PSTRAIN_WORKER_WORKER_FLAGS_H_
#define PSTRAIN_WORKER_WORKER_FLAGS_H_

#include <gflags/gflags.h>

#include <optional>

#include "core/status.h"
#include "nn/model.h"
#include "proto/model.pb.h"
#include "proto/ps.pb.h"
#include "ps/lr_schedule.h"
#include "worker/trainer.h"

DECLARE_string(model);
DECLARE_int32(batch_size);
DECLARE_int32(num_towers);
DECLARE_int32(num_gpus);
DECLARE_int64(max_steps);
DECLARE_int64(epochs);
DECLARE_int64(train_examples);
DECLARE_int64(min_after_dequeue);
DECLARE_int32(input_threads);
DECLARE_string(input_priority);
DECLARE_uint64(seed);
DECLARE_int32(ready_timeout_secs);
DECLARE_string(wire_dtype);
DECLARE_bool(tensor_shm);
DECLARE_string(overlap_transfers);

namespace pstrain {

// The Trainer's options from the flags for worker `index` training `model`
// under `sync`: the step's cadence, its retries, and what is done to each
// gradient (--weight_decay, --gradient_multipliers, --clip_gradients_*),
// checked against the model's variables. InvalidArgument naming the flag.
// `overlap` and `loss_is_sum` are the caller's (they need the host and the
// spec).
StatusOr<TrainerOptions> TrainerOptionsFromFlags(int index, const nn::Model& model,
                                                 const proto::SyncConfig& sync, bool overlap,
                                                 bool loss_is_sum);

// For a model of example-by-example updates (nn/fasttext_model.h): the rate
// of its updates at each global step, from --learning_rate and
// --lr_schedule (or the recipe), which for any other model the ps tasks
// train with; a linear decay without --decay_steps falls to 0 over
// `steps_of_run` (ExampleUpdateConfigFromFlags). Nothing for another model.
StatusOr<std::optional<LrSchedule>> ExampleLearningRateFromFlags(const proto::ModelSpec& spec,
                                                                 int64_t steps_of_run);

}  // namespace pstrain

#endif  // PSTRAIN_WORKER_WORKER_FLAGS_H_
