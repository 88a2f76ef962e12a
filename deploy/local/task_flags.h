// The flags of the launcher's tasks, asked of the task binaries themselves,
// and the routing of the launcher's command line to the tasks that take
// each flag: a flag no task takes is refused, naming the nearest real one,
// so a typo never runs a whole job on defaults.
//
// Thread-compatible.
#ifndef PSTRAIN_DEPLOY_LOCAL_TASK_FLAGS_H_
#define PSTRAIN_DEPLOY_LOCAL_TASK_FLAGS_H_

#include <map>
#include <string>
#include <vector>

#include "core/status.h"

namespace pstrain {

// A binary's flags: each name, and whether it is a boolean (which takes
// --name, --noname or --name=value; every other flag takes a value).
using FlagSet = std::map<std::string, bool>;

// Runs `binary --helpxml` (gflags lists every flag the binary defines, its
// own and glog's) and reads the names and types. Unavailable when it does
// not run or lists nothing.
StatusOr<FlagSet> ReadBinaryFlags(const std::string& binary);

// The name nearest `name` among `candidates` by edit distance ("" when
// there are none).
std::string NearestName(const std::string& name, const std::vector<std::string>& candidates);

struct FlagRoute {
  // For each job ("ps", "chief", "worker"), the arguments it takes, in the
  // order given, each one argument ("--epochs=3", "--nosync_replicas").
  std::map<std::string, std::vector<std::string>> by_job;
};

// Routes `args` (what the launcher did not take itself: "--epochs=3",
// "--epochs 3", "--sync_replicas", "--nosync_replicas") to the jobs whose
// flags name them. InvalidArgument, naming the argument, for one that is
// not a flag, one no job takes (with the nearest flag of any job or of
// `launcher_flags`), one of `launcher_sets` (the launcher sets it: the
// value says what to use instead, or is empty), or a flag left without
// its value.
StatusOr<FlagRoute> RouteFlags(const std::vector<std::string>& args,
                               const std::map<std::string, FlagSet>& jobs,
                               const std::vector<std::string>& launcher_flags,
                               const std::map<std::string, std::string>& launcher_sets);

}  // namespace pstrain

#endif  // PSTRAIN_DEPLOY_LOCAL_TASK_FLAGS_H_
