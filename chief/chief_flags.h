// The chief's flags (what chief --help lists under chief/chief_flags.cc),
// parsed and checked once into the Supervisor's options, so that the
// chief's main only wires parts together and the checks are tested without
// starting a process.
#ifndef PSTRAIN_CHIEF_CHIEF_FLAGS_H_
#define PSTRAIN_CHIEF_CHIEF_FLAGS_H_

#include <gflags/gflags.h>

#include <map>
#include <string>

#include "chief/supervisor.h"
#include "core/status.h"
#include "core/tensor.h"
#include "nn/model.h"
#include "proto/model.pb.h"

DECLARE_string(model);
DECLARE_string(train_dir);
DECLARE_int32(http_port);
DECLARE_string(http_host);

namespace pstrain {

// The Supervisor's options from the flags, for the model of `spec` (whose
// recipe gives --ema_decay and --eval_use_moving_averages where they are
// not given) and a cluster of num_workers workers: every check of the
// chief's flags, InvalidArgument naming the flag. Leaves out what needs
// more than flags: the warm start's values, the test data, the board.
StatusOr<SupervisorOptions> SupervisorOptionsFromFlags(const proto::ModelSpec& spec,
                                                       int num_workers);

// --warm_start_from's values for `model`'s variables (and their slots with
// --warm_start_slots), under `init`'s optimizer and moving averages; empty
// without the flag. InvalidArgument for --warm_start_vars, _map or _slots
// without it, and WarmStartValues' errors.
StatusOr<std::map<std::string, Tensor>> WarmStartFromFlags(const nn::Model& model,
                                                           const proto::InitHeader& init);

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_CHIEF_FLAGS_H_
