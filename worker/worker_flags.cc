#include "worker/worker_flags.h"

#include <string>
#include <vector>

#include "ps/lr_schedule.h"
#include "ps/optimizer_flags.h"
#include "ps/sync_flags.h"
#include "worker/gradient_processing.h"

DEFINE_string(model, "mnist",
              "Network to train: a built-in one (mnist, mnist_bn, cifar10, mnist_ids, wide_deep, "
              "fasttext, movielens, resnet20, dcn, deepfm, dlrm) , a ModelSpec "
              "text file (proto/model.proto), or keras:FILE.json (a Keras model's to_json())");
DEFINE_int32(batch_size, 128,
             "Examples per step of each tower (unset: the model recipe's, else 128)");
DEFINE_int32(num_towers, 1,
             "Towers on the CPU: each runs the model on its own batch of --batch_size on its "
             "share of the cores; their gradients are averaged and pushed once per step");
DEFINE_int32(num_gpus, 0,
             "Towers on GPUs, one on each of cuda:0 .. cuda:K-1, each on its own batch of "
             "--batch_size (CUDA backend: cuDNN, cuBLAS); where this host has no GPU, as many "
             "towers on the CPU, and the log says why");
DEFINE_int64(max_steps, 0, "Stop when global_step reaches this (0: no limit)");
DEFINE_int64(epochs, 1, "Passes over this worker's shard of the input (0: no limit)");
DEFINE_int64(train_examples, 0,
             "Train on the first this many examples of the training set (0: all of them)");
DEFINE_int64(min_after_dequeue, -1,
             "Training shuffle buffer: examples kept in it after each batch (0: shuffle each "
             "epoch's shard instead; -1: the model's input spec, cifar10: 20000)");
DEFINE_int32(input_threads, 1, "Threads that read and preprocess training examples");
DEFINE_string(input_priority, "auto",
              "Priority of the threads that read and preprocess training examples: idle "
              "(SCHED_IDLE: only CPU time that training leaves), normal, or auto (idle where the "
              "workers on this host compute on the CPU and take every usable CPU, else normal)");
DEFINE_int32(log_frequency, 10, "Log a progress line every this many steps");
DEFINE_uint64(seed, 0, "Seed of the input's shuffling (each worker adds its index)");
DEFINE_int32(ready_timeout_secs, 600, "Give up waiting for the chief to initialize after this");
DEFINE_int32(retry_timeout_secs, 300,
             "Keep retrying a step that fails because a ps is down or restarting this long");
DEFINE_string(weight_decay, "",
              "L2 weight decay per variable, e.g. local3/weights=0.004,local4/weights=0.004");
DEFINE_string(gradient_multipliers, "", "Gradient multipliers per variable, e.g. conv1/biases=2");
DEFINE_double(clip_gradients_by_value, 0, "Clip every gradient element to [-v, v] (0: off)");
DEFINE_double(clip_gradients_by_norm, 0, "Clip each variable's gradient to this L2 norm (0: off)");
DEFINE_double(clip_gradients_by_global_norm, 0,
              "Clip all gradients together to this global norm (0: off)");
DEFINE_string(wire_dtype, "float32",
              "How gradients and pulled variables travel to and from the ps: float32, or "
              "bfloat16 (half the bytes; over the ps's tensor channel only, the ps keeps and "
              "applies float32)");
DEFINE_bool(tensor_shm, true,
            "Let the tensor channel to a ps on this host (a loopback address) carry tensors "
            "through shared memory instead of the socket");
DEFINE_string(overlap_transfers, "auto",
              "Overlap each step's pull and push with its computation, layer by layer: on, off, "
              "or auto (on when the compute threads of this host's workers leave a CPU free)");
DEFINE_int32(test_only_step_delay_ms, 0, "Test only: sleep this long in every step");

namespace pstrain {

StatusOr<TrainerOptions> TrainerOptionsFromFlags(int index, const nn::Model& model,
                                                 const proto::SyncConfig& sync, bool overlap,
                                                 bool loss_is_sum) {
  TrainerOptions options;
  options.worker_index = index;
  options.max_steps = FLAGS_max_steps;
  options.log_frequency = FLAGS_log_frequency;
  options.sync = sync.enabled();
  options.step_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(FLAGS_step_timeout_secs * 1000));
  options.staleness = FLAGS_staleness;
  options.step_delay = std::chrono::milliseconds(FLAGS_test_only_step_delay_ms);
  options.retry_budget = std::chrono::seconds(FLAGS_retry_timeout_secs);
  options.overlap = overlap;
  options.loss_is_sum = loss_is_sum;
  PS_ASSIGN_OR_RETURN(options.gradients.weight_decay,
                      ParseVariableFloats("weight_decay", FLAGS_weight_decay));
  PS_ASSIGN_OR_RETURN(options.gradients.multipliers,
                      ParseVariableFloats("gradient_multipliers", FLAGS_gradient_multipliers));
  options.gradients.clip_value = static_cast<float>(FLAGS_clip_gradients_by_value);
  options.gradients.clip_norm = static_cast<float>(FLAGS_clip_gradients_by_norm);
  options.gradients.clip_global_norm = static_cast<float>(FLAGS_clip_gradients_by_global_norm);
  std::vector<std::string> names;
  std::vector<bool> trainable;
  for (const auto& var : model.variables()) {
    names.push_back(var.name);
    trainable.push_back(var.trainable);
  }
  PS_RETURN_IF_ERROR(
      CheckGradientOptions(options.gradients, names, trainable).Annotate("model " + FLAGS_model));
  return options;
}

StatusOr<std::optional<LrSchedule>> ExampleLearningRateFromFlags(const proto::ModelSpec& spec,
                                                                 int64_t steps_of_run) {
  if (spec.loss_reduction() != proto::EXAMPLE_BY_EXAMPLE) return std::optional<LrSchedule>();
  PS_ASSIGN_OR_RETURN(proto::OptimizerConfig config,
                      ExampleUpdateConfigFromFlags(spec, steps_of_run));
  PS_ASSIGN_OR_RETURN(LrSchedule schedule,
                      LrSchedule::Create(config.lr_schedule(), config.learning_rate()));
  return std::optional<LrSchedule>(schedule);
}

}  // namespace pstrain
