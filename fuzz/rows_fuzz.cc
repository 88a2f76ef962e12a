// The readers of a model's rows: one input read as UCI-style CSV (the
// census columns), as fastText's text (a dictionary made from it, then its
// lines), and as TFRecords of Examples with variable-length features, both
// as a model of ids reads them and as the columns feature columns
// transform (identity, hashed, vocabulary and crossed columns of
// variable-length features).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "data/csv_dataset.h"
#include "data/example_rows.h"
#include "data/feature_batches.h"
#include "data/feature_columns.h"
#include "data/text_dataset.h"
#include "fuzz/fuzz_input.h"

namespace {

pstrain::data::CsvOptions CensusLike() {
  pstrain::data::CsvOptions o;
  o.columns = {{"age", true}, {"workclass", false}, {"hours", true}, {"income", false}};
  o.label_column = "income";
  o.label_vocabulary = {"<=50K", ">50K"};
  return o;
}

pstrain::proto::ExampleInputSpec SparseFeatures() {
  pstrain::proto::ExampleInputSpec spec;
  spec.set_label_key("label");
  auto* ids = spec.add_feature();
  ids->set_name("ids");
  ids->set_weight_key("weights");
  auto* tags = spec.add_feature();
  tags->set_name("tags");
  tags->set_hash_buckets(1000);
  return spec;
}

pstrain::proto::ExampleInputSpec Columns() {
  pstrain::proto::ExampleInputSpec spec;
  spec.set_label_key("label");
  spec.add_column()->set_name("ids");
  spec.add_column()->set_name("tags");
  auto* weights = spec.add_column();
  weights->set_name("weights");
  weights->set_numeric(true);
  return spec;
}

std::vector<pstrain::proto::FeatureColumn> FeatureColumnsOverThem() {
  std::vector<pstrain::proto::FeatureColumn> c(5);
  c[0].set_name("ids");
  c[0].mutable_identity()->set_key("ids");
  c[0].mutable_identity()->set_num_buckets(100);
  c[0].mutable_identity()->set_default_value(0);
  c[1].set_name("tags");
  c[1].mutable_vocabulary_list()->set_key("tags");
  c[1].mutable_vocabulary_list()->add_vocabulary("a");
  c[1].mutable_vocabulary_list()->set_num_oov_buckets(3);
  c[2].set_name("tags_hashed");
  c[2].mutable_hash_bucket()->set_key("tags");
  c[2].mutable_hash_bucket()->set_hash_bucket_size(50);
  c[3].set_name("ids_x_tags");
  c[3].mutable_crossed()->add_columns("ids");
  c[3].mutable_crossed()->add_keys("tags");
  c[3].mutable_crossed()->set_hash_bucket_size(1000);
  c[4].set_name("weights");
  c[4].mutable_numeric()->set_key("weights");
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pstrain::fuzz::InputFile file(".rows", data, size);
  (void)pstrain::data::ReadCsvFile(file.path(), CensusLike());
  pstrain::data::TextOptions text;
  text.buckets = 1000;
  auto dict = pstrain::data::TextDictionary::Build(file.path(), text);
  if (dict.ok()) (void)pstrain::data::ReadFastTextFile(file.path(), *dict);
  (void)pstrain::data::ReadExampleRows(file.path(), SparseFeatures(), 3);
  auto table = pstrain::data::ReadExampleTable(file.path(), Columns(), 3);
  if (table.ok()) {
    auto columns = pstrain::data::FeatureColumns::Create(FeatureColumnsOverThem(), table->columns);
    if (!columns.ok()) abort();  // they hold together
    pstrain::data::FeatureRequest request;
    request.sparse = {"ids", "tags", "tags_hashed", "ids_x_tags", "weights"};
    request.dense = {"weights"};
    (void)pstrain::data::Featurize(*table, *columns, request);
  }
  return 0;
}
