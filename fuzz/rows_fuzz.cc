// The readers of a model's rows: one input read as UCI-style CSV (the
// census columns), as fastText's text (a dictionary made from it, then its
// lines), and as TFRecords of Examples with variable-length features.
#include <cstddef>
#include <cstdint>

#include "data/csv_dataset.h"
#include "data/example_rows.h"
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  pstrain::fuzz::InputFile file(".rows", data, size);
  (void)pstrain::data::ReadCsvFile(file.path(), CensusLike());
  pstrain::data::TextOptions text;
  text.buckets = 1000;
  auto dict = pstrain::data::TextDictionary::Build(file.path(), text);
  if (dict.ok()) (void)pstrain::data::ReadFastTextFile(file.path(), *dict);
  (void)pstrain::data::ReadExampleRows(file.path(), SparseFeatures(), 3);
  return 0;
}
