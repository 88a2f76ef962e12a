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

namespace pstrain {
namespace data {

// The spec as the data flags make it: a text model's with --ngrams,
// --buckets and --dim applied (each when given: its text input's word
// n-grams and buckets, and the dimension of its embeddings of "words"), and
// its vocabulary files read from --data_dir (ReadVocabularyFiles).
// InvalidArgument naming the flag for a value below 1, or for one given to a
// model without text input; ReadVocabularyFiles' errors.
Status ApplyDataFlags(proto::ModelSpec* spec);

}  // namespace data
}  // namespace pstrain

#endif  // PSTRAIN_DATA_DATA_FLAGS_H_
