#include "ps/client/table_steps.h"

#include <utility>

namespace pstrain {

Status TableStepsOf(const std::vector<nn::EmbeddingLookup>& lookups, const data::Batch& batch,
                    std::vector<PsFleet::TableStep>* tables) {
  tables->resize(lookups.size());
  for (size_t l = 0; l < lookups.size(); ++l) {
    auto it = batch.sparse.find(lookups[l].feature);
    if (it == batch.sparse.end()) {
      return InvalidArgument("the input has no sparse feature " + lookups[l].feature +
                             ", which layer " + lookups[l].layer + " looks up");
    }
    const RaggedIds& ids = it->second;
    PsFleet::TableStep& t = (*tables)[l];
    t.table = lookups[l].table.name();
    t.dim = lookups[l].table.dim();
    Unique(ids.values.data(), static_cast<int64_t>(ids.values.size()), &t.unique, &t.ids);
  }
  return OkStatus();
}

nn::ModelInput ModelInputOf(const std::vector<nn::EmbeddingLookup>& lookups,
                            const data::Batch& batch,
                            const std::vector<PsFleet::TableStep>& tables) {
  if (lookups.empty()) return nn::ModelInput::Images(batch.images);
  nn::SparseInput input;
  for (size_t l = 0; l < tables.size(); ++l) {
    input.bags.push_back({&batch.sparse.at(lookups[l].feature), &tables[l].ids.position});
    input.rows.push_back(&tables[l].rows);
  }
  if (batch.dense.size() > 0) input.dense = &batch.dense;
  return nn::ModelInput::Ids(std::move(input));
}

}  // namespace pstrain
