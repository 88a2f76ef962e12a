#include "data/data_flags.h"

#include "data/feature_columns.h"
#include "data/text_dataset.h"

DEFINE_string(data_dir, "/usr/share/datasets/fashion-mnist",
              "Directory of the data set: MNIST IDX files (train-images-idx3-ubyte[.gz], ...), "
              "the CIFAR-10 binaries (the folder holding cifar-10-batches-bin/, or that folder) "
              "or TFRecord files of tf.train.Example (train.tfrecords[.gz], "
              "test.tfrecords[.gz]); the default is where Debian's dataset-fashion-mnist "
              "package installs Fashion-MNIST");
DEFINE_string(data_format, "auto",
              "idx, cifar or tfrecord; auto: recognised from the files in --data_dir");
DEFINE_int32(ngrams, 0,
             "A text model: word n-grams up to this length, as fastText's -wordNgrams (0: the "
             "model's)");
DEFINE_int64(buckets, 0,
             "A text model: hash buckets of the word n-grams, as fastText's -bucket (0: the "
             "model's)");
DEFINE_int32(dim, 0,
             "A text model: the dimension of its word embeddings, as fastText's -dim, "
             "and a uniform start within 1/dim where the model starts so (0: the model's)");
DEFINE_int32(min_count, 0,
             "A text model: the fewest times a word must occur in the training file to be in "
             "the dictionary, as fastText's -minCount (0: the model's)");

namespace pstrain {
namespace data {

Status ApplyDataFlags(proto::ModelSpec* spec) {
  PS_RETURN_IF_ERROR(ReadVocabularyFiles(spec, FLAGS_data_dir));
  PS_RETURN_IF_ERROR(TakeClassesFromText(spec, FLAGS_data_dir));
  const bool given =
      FLAGS_ngrams != 0 || FLAGS_buckets != 0 || FLAGS_dim != 0 || FLAGS_min_count != 0;
  if (!given) return OkStatus();
  if (!spec->input().has_text()) {
    return InvalidArgument(
        "--ngrams, --buckets, --dim and --min_count are for a model of text; "
        "model " +
        spec->name() + " reads no text");
  }
  if (FLAGS_ngrams < 0 || FLAGS_buckets < 0 || FLAGS_dim < 0 || FLAGS_min_count < 0) {
    return InvalidArgument(
        "--ngrams, --buckets, --dim and --min_count must be >= 1 (0: the model's)");
  }
  proto::TextInputSpec* text = spec->mutable_input()->mutable_text();
  if (FLAGS_ngrams > 0) text->set_word_ngrams(FLAGS_ngrams);
  if (FLAGS_buckets > 0) text->set_buckets(FLAGS_buckets);
  if (FLAGS_min_count > 0) text->set_min_count(FLAGS_min_count);
  if (FLAGS_dim > 0) {
    for (proto::LayerSpec& layer : *spec->mutable_layer()) {
      if (layer.has_embedding_bag() && layer.embedding_bag().feature() == "words") {
        proto::EmbeddingSpec* bag = layer.mutable_embedding_bag();
        bag->set_dim(FLAGS_dim);
        // fastText's rows start within 1/dim.
        if (bag->has_initializer_uniform()) bag->set_initializer_uniform(1.0f / FLAGS_dim);
      }
    }
  }
  return OkStatus();
}

}  // namespace data
}  // namespace pstrain
