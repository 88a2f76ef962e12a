#include "nn/keras_model.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <utility>
#include <vector>

namespace pstrain {
namespace nn {
namespace {

using google::protobuf::ListValue;
using google::protobuf::Struct;
using google::protobuf::Value;

// A field's value; null when absent or JSON null (Keras writes unset
// options as null).
const Value* Find(const Struct& s, const std::string& key) {
  auto it = s.fields().find(key);
  if (it == s.fields().end() || it->second.kind_case() == Value::kNullValue) return nullptr;
  return &it->second;
}

// One layer's config, read with errors naming the layer and the option.
class Config {
 public:
  Config(const Struct& s, std::string at) : s_(s), at_(std::move(at)) {}
  const std::string& at() const { return at_; }
  const Value* Get(const std::string& key) const { return Find(s_, key); }

  Status Bad(const std::string& key, const std::string& why) const {
    return InvalidArgument(at_ + ": " + key + " " + why);
  }
  StatusOr<double> Number(const std::string& key, double fallback) const {
    const Value* v = Get(key);
    if (v == nullptr) return fallback;
    if (v->kind_case() != Value::kNumberValue) return Bad(key, "is not a number");
    return v->number_value();
  }
  StatusOr<int64_t> Count(const std::string& key) const {
    PS_ASSIGN_OR_RETURN(double n, Number(key, -1));
    if (n < 1 || n != std::floor(n)) return Bad(key, "must be a positive whole number");
    return static_cast<int64_t>(n);
  }
  StatusOr<std::string> String(const std::string& key, const std::string& fallback) const {
    const Value* v = Get(key);
    if (v == nullptr) return fallback;
    if (v->kind_case() != Value::kStringValue) return Bad(key, "is not a string");
    return v->string_value();
  }
  StatusOr<bool> Bool(const std::string& key, bool fallback) const {
    const Value* v = Get(key);
    if (v == nullptr) return fallback;
    if (v->kind_case() != Value::kBoolValue) return Bad(key, "is not true or false");
    return v->bool_value();
  }
  // A size given as n or [n, n] (a square window); `fallback` when unset.
  StatusOr<int64_t> Square(const std::string& key, int64_t fallback) const {
    const Value* v = Get(key);
    if (v == nullptr) return fallback;
    if (v->kind_case() == Value::kNumberValue) return Count(key);
    if (v->kind_case() != Value::kListValue || v->list_value().values_size() != 2) {
      return Bad(key, "is not a number or a pair");
    }
    const auto& pair = v->list_value().values();
    if (pair[0].number_value() != pair[1].number_value() || pair[0].number_value() < 1) {
      return Bad(key, "must be two equal positive sizes (pstrain's windows are square)");
    }
    return static_cast<int64_t>(pair[0].number_value());
  }
  // Refuses an option pstrain does not have, when set.
  Status Unset(const std::string& key) const {
    return Get(key) == nullptr ? OkStatus() : Bad(key, "is set; pstrain has no such option");
  }
  Status Expect(const std::string& key, const std::string& wanted) const {
    PS_ASSIGN_OR_RETURN(std::string v, String(key, wanted));
    return v == wanted ? OkStatus()
                       : Bad(key, "is '" + v + "'; pstrain takes only '" + wanted + "'");
  }

 private:
  const Struct& s_;
  const std::string at_;
};

// A Keras layer as the config lists it.
struct KerasLayer {
  std::string class_name, name;
  const Struct* config = nullptr;
  std::vector<std::string> inbound;  // the layers it reads, in order
};

// The names of the layers whose tensors a Keras 3 call's arguments hold
// ({"class_name": "__keras_tensor__", "config": {"keras_history": [layer,
// node, index]}}), in order, however nested.
void CollectTensors(const Value& v, std::vector<const ListValue*>* histories) {
  if (v.kind_case() == Value::kListValue) {
    for (const Value& e : v.list_value().values()) CollectTensors(e, histories);
    return;
  }
  if (v.kind_case() != Value::kStructValue) return;
  const Value* cls = Find(v.struct_value(), "class_name");
  const Value* config = Find(v.struct_value(), "config");
  if (cls != nullptr && cls->string_value() == "__keras_tensor__" && config != nullptr &&
      config->kind_case() == Value::kStructValue) {
    const Value* history = Find(config->struct_value(), "keras_history");
    if (history != nullptr && history->kind_case() == Value::kListValue) {
      histories->push_back(&history->list_value());
    }
    return;
  }
  for (const auto& [key, field] : v.struct_value().fields()) CollectTensors(field, histories);
}

// The layers a Functional model's layer reads: its one inbound node, in
// Keras 2's form ([[[layer, node, index, kwargs], ...]]) or Keras 3's
// ([{"args": [...], "kwargs": {...}}]).
StatusOr<std::vector<std::string>> InboundLayers(const Struct& layer, const std::string& at) {
  const Value* nodes = Find(layer, "inbound_nodes");
  if (nodes == nullptr || nodes->list_value().values_size() == 0) return std::vector<std::string>{};
  if (nodes->list_value().values_size() > 1) {
    return InvalidArgument(at + ": called " + std::to_string(nodes->list_value().values_size()) +
                           " times (pstrain has no shared layers)");
  }
  const Value& node = nodes->list_value().values(0);
  std::vector<const ListValue*> histories;
  if (node.kind_case() == Value::kStructValue) {
    if (const Value* args = Find(node.struct_value(), "args")) CollectTensors(*args, &histories);
    std::vector<const ListValue*> in_kwargs;
    if (const Value* kw = Find(node.struct_value(), "kwargs")) CollectTensors(*kw, &in_kwargs);
    if (!in_kwargs.empty()) return InvalidArgument(at + ": takes a tensor as a keyword argument");
  } else {
    for (const Value& ref : node.list_value().values()) histories.push_back(&ref.list_value());
  }
  std::vector<std::string> names;
  for (const ListValue* h : histories) {
    if (h->values_size() < 3 || h->values(0).kind_case() != Value::kStringValue) {
      return InvalidArgument(at + ": an inbound tensor is not [layer, node, index]");
    }
    if (h->values(1).number_value() != 0 || h->values(2).number_value() != 0) {
      return InvalidArgument(
          at + ": reads output " + std::to_string(static_cast<int>(h->values(2).number_value())) +
          " of call " + std::to_string(static_cast<int>(h->values(1).number_value())) + " of " +
          h->values(0).string_value() + " (pstrain's layers are called once and have one output)");
    }
    names.push_back(h->values(0).string_value());
  }
  return names;
}

// A serialized Keras object ({"class_name": "L2", "config": {...}}), or a
// bare name as older Keras writes an initializer ("glorot_uniform").
struct KerasObject {
  std::string class_name;
  const Struct* config;  // empty when it has none
  bool serialized;       // an object, not a bare name
  bool has_config;
};

KerasObject ObjectOf(const Value* v) {
  static const Struct kEmpty;
  KerasObject o{"", &kEmpty, false, false};
  if (v != nullptr && v->kind_case() == Value::kStringValue) o.class_name = v->string_value();
  if (v == nullptr || v->kind_case() != Value::kStructValue) return o;
  o.serialized = true;
  if (const Value* cls = Find(v->struct_value(), "class_name")) o.class_name = cls->string_value();
  if (const Value* config = Find(v->struct_value(), "config")) {
    o.config = &config->struct_value();
    o.has_config = true;
  }
  return o;
}

// A Keras initializer ({"class_name": "GlorotUniform", "config": {...}} or
// its name, "glorot_uniform") as pstrain's.
StatusOr<proto::InitializerSpec> InitializerOf(const Value* v, const std::string& what) {
  proto::InitializerSpec spec;
  const KerasObject init = ObjectOf(v);
  const std::string& cls = init.class_name;
  std::string key;
  for (char c : cls) {
    if (c != '_') key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  const Config cfg(*init.config, what);
  auto scaling = [&spec](float scale, proto::VarianceScalingSpec::Mode mode,
                         proto::VarianceScalingSpec::Distribution d) {
    auto* vs = spec.mutable_variance_scaling();
    vs->set_scale(scale);
    vs->set_mode(mode);
    vs->set_distribution(d);
    return spec;
  };
  using VS = proto::VarianceScalingSpec;
  if (key == "glorotuniform") return scaling(1, VS::FAN_AVG, VS::UNIFORM);
  if (key == "glorotnormal") return scaling(1, VS::FAN_AVG, VS::TRUNCATED_NORMAL);
  if (key == "heuniform") return scaling(2, VS::FAN_IN, VS::UNIFORM);
  if (key == "henormal") return scaling(2, VS::FAN_IN, VS::TRUNCATED_NORMAL);
  if (key == "lecununiform") return scaling(1, VS::FAN_IN, VS::UNIFORM);
  if (key == "lecunnormal") return scaling(1, VS::FAN_IN, VS::TRUNCATED_NORMAL);
  if (key == "variancescaling") {
    PS_ASSIGN_OR_RETURN(double scale, cfg.Number("scale", 1));
    PS_ASSIGN_OR_RETURN(std::string mode, cfg.String("mode", "fan_in"));
    PS_ASSIGN_OR_RETURN(std::string dist, cfg.String("distribution", "truncated_normal"));
    static const std::map<std::string, VS::Mode> kModes = {
        {"fan_in", VS::FAN_IN}, {"fan_out", VS::FAN_OUT}, {"fan_avg", VS::FAN_AVG}};
    if (kModes.count(mode) == 0) return cfg.Bad("mode", "'" + mode + "' is not a fan mode");
    if (dist != "truncated_normal" && dist != "uniform") {
      return cfg.Bad("distribution", "'" + dist + "': pstrain has truncated_normal and uniform");
    }
    return scaling(static_cast<float>(scale), kModes.at(mode),
                   dist == "uniform" ? VS::UNIFORM : VS::TRUNCATED_NORMAL);
  }
  if (key == "zeros") {
    spec.set_constant(0);
  } else if (key == "ones") {
    spec.set_constant(1);
  } else if (key == "constant") {
    PS_ASSIGN_OR_RETURN(double value, cfg.Number("value", 0));
    spec.set_constant(static_cast<float>(value));
  } else if (key == "truncatednormal") {
    PS_ASSIGN_OR_RETURN(double mean, cfg.Number("mean", 0));
    PS_ASSIGN_OR_RETURN(double stddev, cfg.Number("stddev", 0.05));
    if (mean != 0) return cfg.Bad("mean", "must be 0");
    spec.set_truncated_normal_stddev(static_cast<float>(stddev));
  } else {
    return InvalidArgument(what + ": initializer '" + cls +
                           "' has no pstrain counterpart (Glorot, He, LeCun, VarianceScaling, "
                           "Zeros, Ones, Constant, TruncatedNormal)");
  }
  return spec;
}

// A kernel regularizer's weight decay: L2(l2) adds l2 * sum(w^2) to the
// loss, pstrain's weight decay wd adds wd * sum(w^2) / 2.
StatusOr<float> WeightDecayOf(const Config& c) {
  const Value* r = c.Get("kernel_regularizer");
  if (r == nullptr) return 0.0f;
  const KerasObject regularizer = ObjectOf(r);
  const std::string& name = regularizer.class_name;
  if (regularizer.serialized && (name == "L2" || name == "L1L2") && regularizer.has_config) {
    const Config rc(*regularizer.config, c.at() + ": kernel_regularizer");
    PS_ASSIGN_OR_RETURN(double l1, rc.Number("l1", 0));
    PS_ASSIGN_OR_RETURN(double l2, rc.Number("l2", 0));
    if (l1 == 0) return static_cast<float>(2 * l2);
  }
  return c.Bad("kernel_regularizer", "is not an L2 (pstrain's weight decay is L2)");
}

// What a layer's activation option becomes.
enum class Act { kLinear, kRelu, kSigmoid, kTanh, kSoftmax };

StatusOr<Act> ActivationOf(const Config& c, const std::string& key) {
  PS_ASSIGN_OR_RETURN(std::string name, c.String(key, "linear"));
  static const std::map<std::string, Act> kActs = {{"linear", Act::kLinear},
                                                   {"relu", Act::kRelu},
                                                   {"sigmoid", Act::kSigmoid},
                                                   {"tanh", Act::kTanh},
                                                   {"softmax", Act::kSoftmax}};
  auto it = kActs.find(name);
  if (it == kActs.end()) {
    return c.Bad(key, "'" + name + "' has no pstrain counterpart (linear, relu, sigmoid, tanh; " +
                          "softmax on the output)");
  }
  return it->second;
}

// Options every layer may carry: float32 (an input's dtype is checked by
// what reads it), trainable, no activity regularizer or constraints.
Status CheckCommon(const Config& c, bool input) {
  PS_ASSIGN_OR_RETURN(bool trainable, c.Bool("trainable", true));
  if (!trainable) return c.Bad("trainable", "is false; pstrain trains every layer");
  const Value* dtype = c.Get("dtype");
  if (dtype != nullptr && !input) {
    std::string name = dtype->string_value();
    if (dtype->kind_case() == Value::kStructValue) {
      const Value* config = Find(dtype->struct_value(), "config");
      const Value* n = config != nullptr ? Find(config->struct_value(), "name") : nullptr;
      name = n != nullptr ? n->string_value() : "";
    }
    if (name != "float32") return c.Bad("dtype", "is '" + name + "'; pstrain computes in float32");
  }
  for (const char* key :
       {"activity_regularizer", "kernel_constraint", "bias_constraint", "bias_regularizer",
        "embeddings_regularizer", "embeddings_constraint", "gamma_regularizer", "beta_regularizer",
        "gamma_constraint", "beta_constraint", "noise_shape"}) {
    PS_RETURN_IF_ERROR(c.Unset(key));
  }
  return OkStatus();
}

// Builds the ModelSpec layer by layer.
class Importer {
 public:
  explicit Importer(std::string source) : source_(std::move(source)) {}
  StatusOr<proto::ModelSpec> Import(const Struct& root);

 private:
  Status ReadLayers(const Struct& config);
  StatusOr<std::string> OutputLayer(const Struct& config) const;
  Status Input(const KerasLayer& layer, const Config& c);
  Status Convert(const KerasLayer& layer);
  // The layer's own spec: its kind's fields set from the config, its
  // activation in *act (applied after it), its output's rank in *rank.
  Status Fill(const KerasLayer& layer, const Config& c, const std::vector<int>& in_ranks,
              proto::LayerSpec* spec, Act* act, int* rank);
  Status Weighted(const KerasLayer& layer, const Config& c, int in_rank, proto::LayerSpec* spec,
                  Act* act);
  Status Pool(const Config& c, int in_rank, proto::PoolSpec* pool);
  Status BatchNorm(const Config& c, int in_rank, proto::BatchNormSpec* bn);
  Status Embedding(const KerasLayer& layer, const Config& c);
  void Add(proto::LayerSpec spec, const std::vector<std::string>& inputs);

  const std::string source_;
  bool functional_ = false;
  std::vector<KerasLayer> layers_;
  std::map<std::string, std::vector<std::string>> readers_;  // layer -> the layers reading it
  std::string output_;                                       // the Keras layer giving the logits
  std::map<std::string, std::string> pstrain_of_;  // Keras layer -> the pstrain name of its output
  std::map<std::string, int64_t> linear_units_;    // a linear Dense's pstrain name -> its units
  std::map<std::string, int> rank_;                // ... its rank, batch left out
  std::set<std::string> id_inputs_;
  proto::ModelSpec spec_;
  std::vector<proto::LayerSpec> embeddings_, others_;
};

StatusOr<proto::ModelSpec> Importer::Import(const Struct& root) {
  const Value* cls = Find(root, "class_name");
  const Value* config = Find(root, "config");
  const std::string name = cls != nullptr ? cls->string_value() : "";
  if (config == nullptr || config->kind_case() != Value::kStructValue ||
      (name != "Sequential" && name != "Functional" && name != "Model")) {
    return InvalidArgument(source_ + ": not a Keras model's JSON (class_name '" + name +
                           "'; pstrain reads Sequential and Functional models)");
  }
  functional_ = name != "Sequential";
  const Struct& c = config->struct_value();
  const Value* model_name = Find(c, "name");
  spec_.set_name(model_name != nullptr ? model_name->string_value() : "keras");
  spec_.set_variable_naming(proto::KERAS);
  PS_RETURN_IF_ERROR(ReadLayers(c));
  PS_ASSIGN_OR_RETURN(output_, OutputLayer(c));
  for (const KerasLayer& layer : layers_) PS_RETURN_IF_ERROR(Convert(layer));
  if (!id_inputs_.empty() && spec_.input_shape_size() > 0) {
    return InvalidArgument(source_ + ": pstrain's networks read images or ids, not both");
  }
  if (!id_inputs_.empty()) {
    // Its examples: TFRecords of tf.train.Example in --data_dir, an int64
    // feature per Input, named as the Input, and an int64 "label".
    proto::ExampleInputSpec* examples = spec_.mutable_input()->mutable_examples();
    examples->set_train_file("train.tfrecord");
    examples->set_test_file("test.tfrecord");
    examples->set_label_key("label");
    for (const std::string& name : id_inputs_) examples->add_feature()->set_name(name);
  }
  for (proto::LayerSpec& l : embeddings_) *spec_.add_layer() = std::move(l);
  for (proto::LayerSpec& l : others_) *spec_.add_layer() = std::move(l);
  return spec_;
}

Status Importer::ReadLayers(const Struct& config) {
  const Value* layers = Find(config, "layers");
  if (layers == nullptr || layers->kind_case() != Value::kListValue) {
    return InvalidArgument(source_ + ": the model's config lists no layers");
  }
  std::string previous;
  for (const Value& v : layers->list_value().values()) {
    KerasLayer layer;
    const Struct& s = v.struct_value();
    const Value* cls = Find(s, "class_name");
    const Value* config = Find(s, "config");
    if (cls == nullptr || config == nullptr || config->kind_case() != Value::kStructValue) {
      return InvalidArgument(source_ + ": layer #" + std::to_string(layers_.size() + 1) +
                             " has no class_name or config");
    }
    layer.class_name = cls->string_value();
    layer.config = &config->struct_value();
    const Value* name = Find(*layer.config, "name");
    if (name == nullptr) name = Find(s, "name");
    layer.name = name != nullptr ? name->string_value() : "";
    const std::string at = source_ + ": layer " + layer.name + " (" + layer.class_name + ")";
    if (layer.name.empty()) return InvalidArgument(at + ": no name");
    if (functional_) {
      PS_ASSIGN_OR_RETURN(layer.inbound, InboundLayers(s, at));
    } else if (!previous.empty()) {
      layer.inbound = {previous};
    } else if (layer.class_name != "InputLayer" && Find(*layer.config, "batch_input_shape")) {
      // An older Keras 2 Sequential: the first layer carries the input's shape.
      KerasLayer input{"InputLayer", layer.name + "_input", layer.config, {}};
      readers_[input.name].push_back(layer.class_name);
      layer.inbound = {input.name};
      layers_.push_back(std::move(input));
    }
    previous = layer.name;
    for (const std::string& in : layer.inbound) readers_[in].push_back(layer.class_name);
    layers_.push_back(std::move(layer));
  }
  if (layers_.empty()) return InvalidArgument(source_ + ": the model has no layers");
  return OkStatus();
}

// The layer whose output are the logits; a final softmax (a Softmax layer,
// an Activation of softmax, or the output Dense's own) is left to the loss.
StatusOr<std::string> Importer::OutputLayer(const Struct& config) const {
  std::string out = layers_.back().name;
  if (functional_) {
    const Value* outputs = Find(config, "output_layers");
    std::vector<const ListValue*> refs;
    if (outputs != nullptr && outputs->kind_case() == Value::kListValue) {
      const ListValue& list = outputs->list_value();
      if (list.values_size() > 0 && list.values(0).kind_case() == Value::kStringValue) {
        refs.push_back(&list);  // Keras 3's one output: [layer, node, index]
      } else {
        for (const Value& r : list.values()) refs.push_back(&r.list_value());
      }
    }
    if (refs.size() != 1 || refs[0]->values_size() < 1) {
      return InvalidArgument(source_ + ": the model has " + std::to_string(refs.size()) +
                             " outputs; pstrain's networks have one, the logits");
    }
    out = refs[0]->values(0).string_value();
  }
  return out;
}

void Importer::Add(proto::LayerSpec spec, const std::vector<std::string>& inputs) {
  if (functional_) {
    for (const std::string& in : inputs) spec.add_inputs(in);
  }
  others_.push_back(std::move(spec));
}

Status Importer::Input(const KerasLayer& layer, const Config& c) {
  const Value* shape = c.Get("batch_shape");
  if (shape == nullptr) shape = c.Get("batch_input_shape");
  if (shape == nullptr || shape->kind_case() != Value::kListValue ||
      shape->list_value().values_size() < 2) {
    return InvalidArgument(c.at() + ": no batch_shape");
  }
  std::vector<int64_t> dims;
  for (int i = 1; i < shape->list_value().values_size(); ++i) {
    const Value& d = shape->list_value().values(i);
    if (d.kind_case() != Value::kNumberValue || d.number_value() < 1) {
      return InvalidArgument(c.at() + ": a dimension other than the batch's is not fixed");
    }
    dims.push_back(static_cast<int64_t>(d.number_value()));
  }
  const auto& readers = readers_[layer.name];
  const bool ids =
      !readers.empty() && std::all_of(readers.begin(), readers.end(),
                                      [](const std::string& r) { return r == "Embedding"; });
  if (ids) {
    if (dims != std::vector<int64_t>{1}) {
      return InvalidArgument(c.at() + ": an input of ids must hold one id an example, shape (1,)");
    }
    id_inputs_.insert(layer.name);
    return OkStatus();
  }
  if (std::find(readers.begin(), readers.end(), "Embedding") != readers.end()) {
    return InvalidArgument(c.at() + ": read both by an Embedding and by other layers");
  }
  PS_ASSIGN_OR_RETURN(std::string dtype, c.String("dtype", "float32"));
  if (dtype != "float32") return c.Bad("dtype", "is '" + dtype + "'; an image input is float32");
  if (dims.size() != 3) {
    return InvalidArgument(c.at() + ": an image input is HWC (rank 3), not rank " +
                           std::to_string(dims.size()) +
                           " (give a vector of pixels the image's shape and Flatten it)");
  }
  if (spec_.input_shape_size() > 0) {
    return InvalidArgument(c.at() + ": a second image input (pstrain's networks read one)");
  }
  for (int64_t d : dims) spec_.add_input_shape(d);
  pstrain_of_[layer.name] = "input";
  rank_[layer.name] = 3;
  return OkStatus();
}

Status Importer::Embedding(const KerasLayer& layer, const Config& c) {
  if (layer.inbound.size() != 1 || id_inputs_.count(layer.inbound[0]) == 0) {
    return InvalidArgument(c.at() + ": reads something other than an Input of ids");
  }
  PS_ASSIGN_OR_RETURN(bool mask_zero, c.Bool("mask_zero", false));
  if (mask_zero) return c.Bad("mask_zero", "is true; pstrain does not mask");
  proto::LayerSpec spec;
  spec.set_name(layer.name);
  proto::EmbeddingSpec* e = spec.mutable_embedding();
  e->set_feature(layer.inbound[0]);
  PS_ASSIGN_OR_RETURN(int64_t input_dim, c.Count("input_dim"));
  PS_ASSIGN_OR_RETURN(int64_t output_dim, c.Count("output_dim"));
  e->set_vocabulary_size(input_dim);
  e->set_dim(static_cast<int32_t>(output_dim));
  // Keras's default, RandomUniform(-0.05, 0.05); pstrain's rows start
  // uniform in [-x, x] or truncated normal.
  const Value* init = c.Get("embeddings_initializer");
  const KerasObject object = ObjectOf(init);
  if (object.serialized && object.class_name == "RandomUniform") {
    const Config rc(*object.config, c.at() + ": RandomUniform");
    PS_ASSIGN_OR_RETURN(double lo, rc.Number("minval", -0.05));
    PS_ASSIGN_OR_RETURN(double hi, rc.Number("maxval", 0.05));
    if (lo != -hi) return rc.Bad("minval", "must be -maxval");
    e->set_initializer_uniform(static_cast<float>(hi));
  } else {
    PS_ASSIGN_OR_RETURN(proto::InitializerSpec i,
                        InitializerOf(init, c.at() + ": embeddings_initializer"));
    if (!i.has_truncated_normal_stddev()) {
      return c.Bad("embeddings_initializer", "is not RandomUniform or TruncatedNormal");
    }
    e->set_initializer_stddev(i.truncated_normal_stddev());
  }
  embeddings_.push_back(std::move(spec));
  pstrain_of_[layer.name] = layer.name;
  rank_[layer.name] = 2;
  return OkStatus();
}

Status Importer::Convert(const KerasLayer& layer) {
  const Config c(*layer.config, source_ + ": layer " + layer.name + " (" + layer.class_name + ")");
  PS_RETURN_IF_ERROR(CheckCommon(c, layer.class_name == "InputLayer"));
  if (layer.class_name == "InputLayer") return Input(layer, c);
  if (layer.class_name == "Embedding") return Embedding(layer, c);
  std::vector<std::string> inputs;
  std::vector<int> in_ranks;
  for (const std::string& in : layer.inbound) {
    auto it = pstrain_of_.find(in);
    if (it == pstrain_of_.end()) {
      return InvalidArgument(c.at() + ": reads " + in + ", which is not a layer before it");
    }
    inputs.push_back(it->second);
    in_ranks.push_back(rank_[in]);
  }
  if (inputs.empty()) return InvalidArgument(c.at() + ": reads nothing (no Input before it)");
  proto::LayerSpec spec;
  spec.set_name(layer.name);
  Act act = Act::kLinear;
  int rank = in_ranks[0];
  PS_RETURN_IF_ERROR(Fill(layer, c, in_ranks, &spec, &act, &rank));
  if (act == Act::kSoftmax) {
    if (layer.name != output_) {
      return InvalidArgument(c.at() + ": softmax before the output (pstrain's loss applies " +
                             "the output's softmax)");
    }
    act = Act::kLinear;
  }
  std::string out = layer.name;
  const bool own = spec.kind_case() != proto::LayerSpec::KIND_NOT_SET;
  if (own) {
    if (spec.has_dense() && act == Act::kLinear) linear_units_[layer.name] = spec.dense().units();
    Add(spec, inputs);
    inputs = {layer.name};
  } else {
    out = inputs[0];  // an Activation of linear or of the output's softmax
  }
  if (act == Act::kSigmoid || act == Act::kTanh) {
    proto::LayerSpec a;
    out = own ? layer.name + (act == Act::kSigmoid ? "_sigmoid" : "_tanh") : layer.name;
    a.set_name(out);
    a.mutable_activation()->set_function(act == Act::kSigmoid ? proto::ActivationSpec::SIGMOID
                                                              : proto::ActivationSpec::TANH);
    Add(std::move(a), inputs);
  } else if (act == Act::kRelu && !spec.has_dense() && !spec.has_conv2d()) {
    proto::LayerSpec r;
    r.set_name(own ? layer.name + "_relu" : layer.name);
    r.mutable_relu();
    out = r.name();
    Add(std::move(r), inputs);
  }
  pstrain_of_[layer.name] = out;
  rank_[layer.name] = rank;
  if (layer.name == output_) {
    auto units = linear_units_.find(out);
    if (units == linear_units_.end() || units->second < 2) {
      return InvalidArgument(c.at() + ": the output is not a Dense of two or more units and " +
                             "a linear or softmax activation (pstrain's networks give the " +
                             "logits of their classes)");
    }
    spec_.set_num_classes(static_cast<int32_t>(units->second));
  }
  return OkStatus();
}

Status Importer::Fill(const KerasLayer& layer, const Config& c, const std::vector<int>& in_ranks,
                      proto::LayerSpec* spec, Act* act, int* rank) {
  const std::string& cls = layer.class_name;
  const int in_rank = in_ranks[0];
  const bool merge = cls == "Add" || cls == "Concatenate" || cls == "Multiply";
  if (!merge && in_ranks.size() != 1) {
    return InvalidArgument(c.at() + ": reads " + std::to_string(in_ranks.size()) + " tensors");
  }
  if (cls == "Dense" || cls == "Conv2D") return Weighted(layer, c, in_rank, spec, act);
  if (cls == "MaxPooling2D") return Pool(c, in_rank, spec->mutable_max_pool());
  if (cls == "AveragePooling2D") return Pool(c, in_rank, spec->mutable_avg_pool());
  if (cls == "BatchNormalization") return BatchNorm(c, in_rank, spec->mutable_batch_norm());
  if (cls == "Dropout") {
    PS_ASSIGN_OR_RETURN(double rate, c.Number("rate", 0));
    if (!(rate >= 0 && rate < 1)) return c.Bad("rate", "must be in [0, 1)");
    spec->mutable_dropout()->set_keep_prob(static_cast<float>(1 - rate));
  } else if (cls == "Flatten") {
    PS_RETURN_IF_ERROR(c.Expect("data_format", "channels_last"));
    spec->mutable_flatten();
    *rank = 1;
  } else if (merge) {
    if (std::any_of(in_ranks.begin(), in_ranks.end(), [&](int r) { return r != in_rank; })) {
      return InvalidArgument(c.at() + ": its inputs differ in rank");
    }
    if (cls == "Concatenate") {
      PS_ASSIGN_OR_RETURN(double axis, c.Number("axis", -1));
      if (axis != -1 && axis != in_rank) {
        return c.Bad("axis", "is not the last (pstrain concatenates along the last axis)");
      }
      spec->mutable_concat();
    } else if (cls == "Add") {
      spec->mutable_add();
    } else {
      spec->mutable_multiply();
    }
  } else if (cls == "Activation") {
    PS_ASSIGN_OR_RETURN(*act, ActivationOf(c, "activation"));
  } else if (cls == "ReLU") {
    for (const char* key : {"max_value", "negative_slope", "threshold"}) {
      PS_ASSIGN_OR_RETURN(double v, c.Number(key, 0));
      if (v != 0) return c.Bad(key, "is set; pstrain's ReLU is max(x, 0)");
    }
    *act = Act::kRelu;
  } else if (cls == "Softmax") {
    *act = Act::kSoftmax;
  } else {
    return InvalidArgument(c.at() +
                           ": pstrain has no such layer (it reads Dense, Conv2D, MaxPooling2D, "
                           "AveragePooling2D, BatchNormalization, Dropout, Flatten, Add, "
                           "Concatenate, Multiply, Embedding, Activation, ReLU, Softmax)");
  }
  return OkStatus();
}

Status Importer::Weighted(const KerasLayer& layer, const Config& c, int in_rank,
                          proto::LayerSpec* spec, Act* act) {
  PS_ASSIGN_OR_RETURN(*act, ActivationOf(c, "activation"));
  PS_ASSIGN_OR_RETURN(bool use_bias, c.Bool("use_bias", true));
  PS_ASSIGN_OR_RETURN(float decay, WeightDecayOf(c));
  PS_ASSIGN_OR_RETURN(proto::InitializerSpec kernel,
                      InitializerOf(c.Get("kernel_initializer"), c.at() + ": kernel_initializer"));
  PS_ASSIGN_OR_RETURN(proto::InitializerSpec bias,
                      InitializerOf(c.Get("bias_initializer"), c.at() + ": bias_initializer"));
  if (layer.class_name == "Dense") {
    if (in_rank != 1) {
      return InvalidArgument(c.at() + ": reads a tensor of rank " + std::to_string(in_rank) +
                             "; pstrain's Dense reads a vector (Flatten before it)");
    }
    if (!use_bias) return c.Bad("use_bias", "is false; pstrain's Dense has a bias");
    proto::DenseSpec* d = spec->mutable_dense();
    PS_ASSIGN_OR_RETURN(int64_t units, c.Count("units"));
    d->set_units(units);
    *d->mutable_weights_initializer() = kernel;
    *d->mutable_biases_initializer() = bias;
    d->set_weight_decay(decay);
    d->set_relu(*act == Act::kRelu);
    return OkStatus();
  }
  if (in_rank != 3) {
    return InvalidArgument(c.at() + ": reads a tensor of rank " + std::to_string(in_rank) +
                           ", not an image (HWC)");
  }
  PS_RETURN_IF_ERROR(c.Expect("data_format", "channels_last"));
  PS_ASSIGN_OR_RETURN(int64_t dilation, c.Square("dilation_rate", 1));
  if (dilation != 1) return c.Bad("dilation_rate", "is not 1; pstrain has no dilated convolution");
  PS_ASSIGN_OR_RETURN(double groups, c.Number("groups", 1));
  if (groups != 1) return c.Bad("groups", "is not 1; pstrain has no grouped convolution");
  proto::Conv2DSpec* conv = spec->mutable_conv2d();
  PS_ASSIGN_OR_RETURN(int64_t filters, c.Count("filters"));
  PS_ASSIGN_OR_RETURN(int64_t kernel_size, c.Square("kernel_size", -1));
  PS_ASSIGN_OR_RETURN(int64_t stride, c.Square("strides", 1));
  PS_ASSIGN_OR_RETURN(std::string padding, c.String("padding", "valid"));
  if (padding != "same" && padding != "valid") return c.Bad("padding", "is not same or valid");
  conv->set_filters(filters);
  conv->set_kernel_size(kernel_size);
  conv->set_stride(stride);
  conv->set_padding(padding == "same" ? proto::SAME : proto::VALID);
  *conv->mutable_weights_initializer() = kernel;
  if (use_bias) *conv->mutable_biases_initializer() = bias;
  conv->set_no_bias(!use_bias);
  conv->set_weight_decay(decay);
  conv->set_relu(*act == Act::kRelu);
  return OkStatus();
}

Status Importer::Pool(const Config& c, int in_rank, proto::PoolSpec* pool) {
  if (in_rank != 3) return InvalidArgument(c.at() + ": reads something other than an image");
  PS_RETURN_IF_ERROR(c.Expect("data_format", "channels_last"));
  PS_ASSIGN_OR_RETURN(int64_t window, c.Square("pool_size", 2));
  PS_ASSIGN_OR_RETURN(int64_t stride, c.Square("strides", window));
  PS_ASSIGN_OR_RETURN(std::string padding, c.String("padding", "valid"));
  if (padding != "same" && padding != "valid") return c.Bad("padding", "is not same or valid");
  pool->set_window(window);
  pool->set_stride(stride);
  pool->set_padding(padding == "same" ? proto::SAME : proto::VALID);
  return OkStatus();
}

Status Importer::BatchNorm(const Config& c, int in_rank, proto::BatchNormSpec* bn) {
  const Value* axis = c.Get("axis");
  double a = -1;
  if (axis != nullptr && axis->kind_case() == Value::kListValue) {
    if (axis->list_value().values_size() != 1) return c.Bad("axis", "names several axes");
    a = axis->list_value().values(0).number_value();
  } else if (axis != nullptr) {
    a = axis->number_value();
  }
  if (a != -1 && a != in_rank) {
    return c.Bad("axis", "is not the last (pstrain normalizes over the channels)");
  }
  for (const char* key : {"center", "scale"}) {
    PS_ASSIGN_OR_RETURN(bool on, c.Bool(key, true));
    if (!on) return c.Bad(key, "is false; pstrain's batch norm has gamma and beta");
  }
  PS_ASSIGN_OR_RETURN(bool renorm, c.Bool("renorm", false));
  if (renorm) return c.Bad("renorm", "is true; pstrain has no batch renormalization");
  const std::pair<const char*, float> kInits[] = {{"gamma_initializer", 1},
                                                  {"beta_initializer", 0},
                                                  {"moving_mean_initializer", 0},
                                                  {"moving_variance_initializer", 1}};
  for (const auto& [key, value] : kInits) {
    if (c.Get(key) == nullptr) continue;
    PS_ASSIGN_OR_RETURN(proto::InitializerSpec init,
                        InitializerOf(c.Get(key), c.at() + ": " + key));
    if (!init.has_constant() || init.constant() != value) {
      return c.Bad(key, "is not the default (pstrain starts batch norm's variables at it)");
    }
  }
  PS_ASSIGN_OR_RETURN(double momentum, c.Number("momentum", 0.99));
  PS_ASSIGN_OR_RETURN(double epsilon, c.Number("epsilon", 1e-3));
  bn->set_momentum(static_cast<float>(momentum));
  bn->set_epsilon(static_cast<float>(epsilon));
  return OkStatus();
}

}  // namespace

StatusOr<proto::ModelSpec> ModelSpecFromKerasJson(const std::string& json,
                                                  const std::string& source) {
  Struct root;
  const auto parsed = google::protobuf::util::JsonStringToMessage(json, &root);
  if (!parsed.ok()) {
    return InvalidArgument(source + ": not JSON: " + std::string(parsed.message()));
  }
  Importer importer(source);
  return importer.Import(root);
}

}  // namespace nn
}  // namespace pstrain
