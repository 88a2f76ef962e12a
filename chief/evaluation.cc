#include "chief/evaluation.h"

#include <algorithm>

namespace pstrain {

StatusOr<EvalResult> EvaluatePrecisionAt1(nn::Model* model, const std::vector<Tensor>& params,
                                          const data::ImageDataset& ds, int batch_size) {
  EvalResult result;
  Tensor images;
  for (int64_t begin = 0; begin < ds.count; begin += batch_size) {
    const int64_t n = std::min<int64_t>(batch_size, ds.count - begin);
    data::NormalizeImages(ds, begin, n, &images);
    PS_ASSIGN_OR_RETURN(Tensor logits, model->Logits(params, images));
    const int64_t classes = logits.dim(1);
    for (int64_t i = 0; i < n; ++i) {
      const float* row = logits.data() + i * classes;
      const int64_t predicted = std::max_element(row, row + classes) - row;
      if (predicted == ds.labels[begin + i]) ++result.correct;
    }
    result.examples += n;
  }
  return result;
}

}  // namespace pstrain
