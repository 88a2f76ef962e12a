// Command-line flags for the input data. Read them in main and pass the values
// down.
#ifndef PSTRAIN_DATA_DATA_FLAGS_H_
#define PSTRAIN_DATA_DATA_FLAGS_H_

#include <gflags/gflags.h>

#include "core/status.h"
#include "proto/model.pb.h"

DECLARE_string(data_dir);
DECLARE_string(data_format);
DECLARE_int32(ngrams);
DECLARE_int64(buckets);
DECLARE_int32(dim);
DECLARE_int32(min_count);

namespace pstrain {
namespace data {

// The spec as the data flags make it: a text model's with --ngrams,
// --buckets, --dim and --min_count applied (each when given: its text
// input's word n-grams, buckets and least count, and the dimension of its
// embeddings of "words"), its classes taken from its training file when it
// names none (TakeClassesFromText), and its vocabulary files read from
// --data_dir (ReadVocabularyFiles). InvalidArgument naming the flag for a
// value below 1, or for one given to a model without text input; the
// readers' errors.
Status ApplyDataFlags(proto::ModelSpec* spec);

}  // namespace data
}  // namespace pstrain

#endif  // PSTRAIN_DATA_DATA_FLAGS_H_
