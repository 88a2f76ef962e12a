// Precision @ 1 of a model's variables on a labelled image set.
#ifndef PSTRAIN_CHIEF_EVALUATION_H_
#define PSTRAIN_CHIEF_EVALUATION_H_

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "data/mnist_dataset.h"
#include "nn/model.h"

namespace pstrain {

struct EvalResult {
  int64_t correct = 0;
  int64_t examples = 0;
  double accuracy() const { return examples == 0 ? 0.0 : static_cast<double>(correct) / examples; }
};

// Runs every example of `ds` through the model in batches of batch_size.
StatusOr<EvalResult> EvaluatePrecisionAt1(nn::Model* model, const std::vector<Tensor>& params,
                                          const data::ImageDataset& ds, int batch_size = 1000);

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_EVALUATION_H_
