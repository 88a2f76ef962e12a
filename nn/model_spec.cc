#include "nn/model_spec.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "nn/keras_model.h"

namespace pstrain {
namespace nn {

// Defined in the generated builtin_models.cc: name -> spec text.
const std::map<std::string, const char*>& BuiltinModelTexts();

namespace {

// Keeps the first error the text parser reports, with its position.
class FirstError : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (error_.empty()) {
      error_ = std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + message;
    }
  }
  const std::string& error() const { return error_; }

 private:
  std::string error_;
};

}  // namespace

std::vector<std::string> BuiltinModelNames() {
  std::vector<std::string> names;
  for (const auto& [name, text] : BuiltinModelTexts()) names.push_back(name);
  return names;
}

StatusOr<proto::ModelSpec> ParseModelSpec(const std::string& text, const std::string& source) {
  google::protobuf::TextFormat::Parser parser;
  FirstError errors;
  parser.RecordErrorsTo(&errors);
  proto::ModelSpec spec;
  if (!parser.ParseFromString(text, &spec)) {
    return InvalidArgument("model spec " + source + ":" + errors.error());
  }
  return spec;
}

bool SumsLossOverBatch(const proto::ModelSpec& spec) {
  if (spec.loss_reduction() == proto::DEFAULT_REDUCTION) return spec.has_wide_deep();
  return spec.loss_reduction() == proto::SUM || spec.loss_reduction() == proto::EXAMPLE_BY_EXAMPLE;
}

StatusOr<proto::ModelSpec> LoadModelSpec(const std::string& name_or_path) {
  const auto& builtin = BuiltinModelTexts();
  auto it = builtin.find(name_or_path);
  if (it != builtin.end()) return ParseModelSpec(it->second, "(built-in " + it->first + ")");
  const std::string kKeras = "keras:";
  const bool keras = name_or_path.rfind(kKeras, 0) == 0;
  const std::string path = keras ? name_or_path.substr(kKeras.size()) : name_or_path;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    if (keras) return NotFound("no Keras model JSON file " + path);
    std::string known;
    for (const auto& [name, text] : builtin) known += (known.empty() ? "" : ", ") + name;
    return NotFound("no model \"" + name_or_path + "\": neither a built-in network (" + known +
                    "), a model spec file, nor keras:FILE.json");
  }
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  if (!file) return InvalidArgument("cannot read model " + path);
  return keras ? ModelSpecFromKerasJson(text.str(), path) : ParseModelSpec(text.str(), path);
}

}  // namespace nn
}  // namespace pstrain
