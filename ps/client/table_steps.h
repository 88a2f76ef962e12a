// A model of ids' step through its tables, on the client side: which rows a
// batch needs from the ps tasks (each lookup's feature made unique, a
// PsFleet::TableStep per lookup), and the model's input once they are
// pulled. The worker's training step and the chief's evaluation share it.
#ifndef PSTRAIN_PS_CLIENT_TABLE_STEPS_H_
#define PSTRAIN_PS_CLIENT_TABLE_STEPS_H_

#include <vector>

#include "core/status.h"
#include "data/batch_source.h"
#include "nn/model.h"
#include "nn/sparse/embedding_front.h"
#include "ps/client/ps_fleet.h"

namespace pstrain {

// One TableStep per lookup of `lookups` (its table, dim and the unique ids
// of its feature in batch.sparse) into *tables, not yet split by ps.
// InvalidArgument naming the feature and the layer when the batch lacks it.
Status TableStepsOf(const std::vector<nn::EmbeddingLookup>& lookups, const data::Batch& batch,
                    std::vector<PsFleet::TableStep>* tables);

// The batch as the model reads it: its images for a model of images (no
// lookups); for a model of ids, its ids and the rows pulled for them
// (tables, as TableStepsOf made them and a pull filled them). Points into
// batch and tables.
nn::ModelInput ModelInputOf(const std::vector<nn::EmbeddingLookup>& lookups,
                            const data::Batch& batch,
                            const std::vector<PsFleet::TableStep>& tables);

}  // namespace pstrain

#endif  // PSTRAIN_PS_CLIENT_TABLE_STEPS_H_
