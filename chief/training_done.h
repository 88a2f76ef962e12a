// The train dir's mark that a job has ended: the file "training_done",
// holding the base name of the final checkpoint ("model.ckpt-1200\n"). The
// chief writes it (atomically) after the final checkpoint and removes it when
// it starts training in the dir; the evaluator ends once it has seen that
// checkpoint, as TensorFlow's evaluator ends at the final step.
#ifndef PSTRAIN_CHIEF_TRAINING_DONE_H_
#define PSTRAIN_CHIEF_TRAINING_DONE_H_

#include <cstdint>
#include <string>

#include "core/status.h"

namespace pstrain {

constexpr char kTrainingDoneFile[] = "training_done";

// Marks `train_dir`'s job as ended at checkpoint `final_base`.
Status MarkTrainingDone(const std::string& train_dir, const std::string& final_base);
// Removes the mark, if any.
Status ClearTrainingDone(const std::string& train_dir);
// The step of the final checkpoint the mark names; -1 when there is no mark.
// DataLoss naming the file when it holds no checkpoint name.
StatusOr<int64_t> FinalCheckpointStep(const std::string& train_dir);

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_TRAINING_DONE_H_
