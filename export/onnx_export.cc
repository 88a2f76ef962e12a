#include "export/onnx_export.h"

#include <onnx/checker.h>

#include <exception>
#include <initializer_list>
#include <type_traits>
#include <utility>
#include <vector>

#include "nn/graph_topology.h"
#include "nn/padding.h"
#include "nn/variable_names.h"

namespace pstrain {

namespace {

Status LooksUpATable(const std::string& layer) {
  return InvalidArgument("layer " + layer +
                         " looks up an embedding table; ONNX export covers dense networks "
                         "(export the tables with --format=projector)");
}

// Where the tensor flowing between layers is, and its layout.
enum class Layout { kNhwc, kNchw, kFlat };

// Builds the graph layer by layer; x_ names the current tensor.
class GraphBuilder {
 public:
  GraphBuilder(onnx::GraphProto* graph, const std::map<std::string, Tensor>& params,
               proto::VariableNaming naming)
      : graph_(graph), params_(params), naming_(naming) {}

  // The tensor a layer gives: its name, layout and sizes.
  struct Flow {
    std::string x;
    Layout layout;
    int64_t h, w, c, features;
  };
  Flow flow() const { return {x_, layout_, h_, w_, c_, features_}; }
  void Resume(const Flow& f) {
    x_ = f.x;
    layout_ = f.layout;
    h_ = f.h;
    w_ = f.w;
    c_ = f.c;
    features_ = f.features;
  }

  // A model variable with the shape the layer expects; InvalidArgument
  // naming it otherwise.
  StatusOr<const Tensor*> Variable(const std::string& name, const Shape& shape) const {
    auto it = params_.find(name);
    if (it == params_.end())
      return InvalidArgument("variable " + name + " is not in the checkpoint");
    if (it->second.shape() != shape) {
      return InvalidArgument("variable " + name + " has shape " + ShapeString(it->second.shape()) +
                             ", the model's " + ShapeString(shape));
    }
    return &it->second;
  }

  // An initializer of `dims` holding `values` (row-major).
  // An initializer of float32 or int64 values, as raw little-endian bytes.
  template <typename T>
  void Initializer(const std::string& name, const Shape& dims, const T* values) {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, int64_t>);
    onnx::TensorProto* t = graph_->add_initializer();
    t->set_name(name);
    t->set_data_type(std::is_same_v<T, float> ? onnx::TensorProto::FLOAT
                                              : onnx::TensorProto::INT64);
    int64_t n = 1;
    for (int64_t d : dims) {
      t->add_dims(d);
      n *= d;
    }
    t->set_raw_data(std::string(reinterpret_cast<const char*>(values), n * sizeof(T)));
  }

  // A node of `op` on `inputs`; its one output is named after `name` and
  // becomes the current tensor.
  onnx::NodeProto* Node(const std::string& op, const std::string& name,
                        std::vector<std::string> inputs) {
    onnx::NodeProto* node = graph_->add_node();
    node->set_op_type(op);
    node->set_name(name);
    for (std::string& in : inputs) node->add_input(std::move(in));
    x_ = name + ":0";
    node->add_output(x_);
    return node;
  }
  // The current tensor through `op` (Relu, Flatten, ...).
  onnx::NodeProto* Apply(const std::string& op, const std::string& name) {
    return Node(op, name, {x_});
  }

  // ONNX's convolutions and LRN want NCHW; flatten and dense want TF's
  // NHWC order.
  void ToNchw(const std::string& layer) {
    if (layout_ != Layout::kNhwc) return;
    Ints(Apply("Transpose", layer + "/to_nchw"), "perm", {0, 3, 1, 2});
    layout_ = Layout::kNchw;
  }
  void ToFlat(const std::string& layer) {
    if (layout_ == Layout::kFlat) return;
    if (layout_ == Layout::kNchw)
      Ints(Apply("Transpose", layer + "/to_nhwc"), "perm", {0, 2, 3, 1});
    Int(Apply("Flatten", layer + "/flatten"), "axis", 1);
    layout_ = Layout::kFlat;
    features_ = h_ * w_ * c_;
  }

  static void Ints(onnx::NodeProto* node, const std::string& name, std::vector<int64_t> values) {
    onnx::AttributeProto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values) a->add_ints(v);
  }
  static void Int(onnx::NodeProto* node, const std::string& name, int64_t value) {
    onnx::AttributeProto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(value);
  }
  static void Float(onnx::NodeProto* node, const std::string& name, float value) {
    onnx::AttributeProto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(value);
  }

  // kernel_shape, strides and pads of a square window over the current
  // H and W, which become the window's output size.
  void Window(onnx::NodeProto* node, int64_t kernel, int64_t stride, proto::Padding padding) {
    const nn::Padding p = padding == proto::VALID ? nn::Padding::kValid : nn::Padding::kSame;
    const nn::WindowDim h = nn::ComputeWindow(h_, kernel, stride, p);
    const nn::WindowDim w = nn::ComputeWindow(w_, kernel, stride, p);
    Ints(node, "kernel_shape", {kernel, kernel});
    Ints(node, "strides", {stride, stride});
    Ints(node, "pads", {h.pad_before, w.pad_before, h.pad_after, w.pad_after});
    h_ = h.out;
    w_ = w.out;
  }

  Status Conv2D(const std::string& name, const proto::Conv2DSpec& spec) {
    ToNchw(name);
    const int64_t k = spec.kernel_size(), f = spec.filters();
    const std::string kernel = nn::KernelName(name, naming_), bias = nn::BiasName(name, naming_);
    PS_ASSIGN_OR_RETURN(const Tensor* hwio, Variable(kernel, {k, k, c_, f}));
    // HWIO -> OIHW.
    std::vector<float> oihw(hwio->size());
    for (int64_t y = 0; y < k; ++y) {
      for (int64_t x = 0; x < k; ++x) {
        for (int64_t i = 0; i < c_; ++i) {
          for (int64_t o = 0; o < f; ++o) {
            oihw[((o * c_ + i) * k + y) * k + x] = hwio->data()[((y * k + x) * c_ + i) * f + o];
          }
        }
      }
    }
    Initializer(kernel, {f, c_, k, k}, oihw.data());
    std::vector<std::string> inputs = {x_, kernel};
    if (!spec.no_bias()) {
      PS_ASSIGN_OR_RETURN(const Tensor* b, Variable(bias, {f}));
      Initializer(bias, {f}, b->data());
      inputs.push_back(bias);
    }
    onnx::NodeProto* conv = Node("Conv", name + "/Conv2D", std::move(inputs));
    Window(conv, k, spec.stride() > 0 ? spec.stride() : 1, spec.padding());
    c_ = f;
    if (spec.relu()) Apply("Relu", name + "/Relu");
    return OkStatus();
  }

  Status Pool(const std::string& name, bool max, const proto::PoolSpec& spec) {
    ToNchw(name);
    onnx::NodeProto* pool = Apply(max ? "MaxPool" : "AveragePool", name);
    // TF's SAME average counts only the cells inside the input.
    if (!max) Int(pool, "count_include_pad", 0);
    Window(pool, spec.window(), spec.stride() > 0 ? spec.stride() : spec.window(), spec.padding());
    return OkStatus();
  }

  Status Lrn(const std::string& name, const proto::LrnSpec& spec) {
    ToNchw(name);
    const int64_t size = 2 * spec.depth_radius() + 1;
    onnx::NodeProto* lrn = Apply("LRN", name);
    Int(lrn, "size", size);
    // ONNX: x / (bias + alpha / size * sum)^beta; TF: x / (bias + alpha * sum)^beta.
    Float(lrn, "alpha", spec.alpha() * static_cast<float>(size));
    Float(lrn, "beta", spec.beta());
    Float(lrn, "bias", spec.bias());
    return OkStatus();
  }

  Status BatchNorm(const std::string& name, const proto::BatchNormSpec& spec) {
    ToNchw(name);
    const int64_t channels = layout_ == Layout::kFlat ? features_ : c_;
    std::vector<std::string> inputs = {x_};
    for (const char* v : {"gamma", "beta", "moving_mean", "moving_variance"}) {
      PS_ASSIGN_OR_RETURN(const Tensor* t, Variable(name + "/" + v, {channels}));
      Initializer(name + "/" + v, {channels}, t->data());
      inputs.push_back(name + "/" + v);
    }
    onnx::NodeProto* bn = Node("BatchNormalization", name, std::move(inputs));
    Float(bn, "epsilon", spec.epsilon() > 0 ? spec.epsilon() : 1e-3f);
    return OkStatus();
  }

  Status Dropout(const std::string& name, const proto::DropoutSpec& spec) {
    const float ratio = 1.0f - spec.keep_prob();
    Initializer(name + "/rate", {}, &ratio);
    Node("Dropout", name, {x_, name + "/rate"});  // no training_mode: inference
    return OkStatus();
  }

  Status Dense(const std::string& name, const proto::DenseSpec& spec) {
    ToFlat(name);
    const int64_t units = spec.units();
    const std::string kernel = nn::KernelName(name, naming_), bias = nn::BiasName(name, naming_);
    PS_ASSIGN_OR_RETURN(const Tensor* w, Variable(kernel, {features_, units}));
    PS_ASSIGN_OR_RETURN(const Tensor* b, Variable(bias, {units}));
    Initializer(kernel, {features_, units}, w->data());
    Initializer(bias, {units}, b->data());
    Node("Gemm", name + "/MatMul", {x_, kernel, bias});
    features_ = units;
    if (spec.relu()) Apply("Relu", name + "/Relu");
    return OkStatus();
  }

  // A layer of several inputs (add, multiply, concat): each input brought
  // to the layout the furthest of them has (NHWC, then NCHW, then flat),
  // then one node over them all.
  Status Merge(const proto::LayerSpec& layer, const std::vector<Flow>& inputs) {
    const std::string& name = layer.name();
    Layout target = Layout::kNhwc;
    for (const Flow& f : inputs) {
      if (f.layout == Layout::kFlat || (f.layout == Layout::kNchw && target == Layout::kNhwc)) {
        target = f.layout;
      }
    }
    std::vector<std::string> xs;
    int64_t channels = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      Resume(inputs[i]);
      const std::string part = name + "/input_" + std::to_string(i);
      if (target == Layout::kNchw) ToNchw(part);
      if (target == Layout::kFlat) ToFlat(part);
      xs.push_back(x_);
      channels += target == Layout::kFlat ? features_ : c_;
    }
    const Flow first = inputs[0];
    if (layer.has_concat()) {
      onnx::NodeProto* concat = Node("Concat", name, std::move(xs));
      Int(concat, "axis", target == Layout::kNhwc ? 3 : 1);
      (target == Layout::kFlat ? features_ : c_) = channels;
      return OkStatus();
    }
    Node(layer.has_add() ? "Add" : "Mul", name, std::move(xs));
    return OkStatus();
  }

  // Zero channels before and after (Pad over NCHW's channel axis, or a flat
  // vector's features).
  Status ChannelPad(const std::string& name, const proto::ChannelPadSpec& spec) {
    ToNchw(name);
    const bool flat = layout_ == Layout::kFlat;
    std::vector<int64_t> pads =
        flat ? std::vector<int64_t>{0, spec.before(), 0, spec.after()}
             : std::vector<int64_t>{0, spec.before(), 0, 0, 0, spec.after(), 0, 0};
    Initializer(name + "/pads", {static_cast<int64_t>(pads.size())}, pads.data());
    Node("Pad", name, {x_, name + "/pads"});
    (flat ? features_ : c_) += spec.before() + spec.after();
    return OkStatus();
  }

  Status Layer(const proto::LayerSpec& layer) {
    const std::string& name = layer.name();
    switch (layer.kind_case()) {
      case proto::LayerSpec::kConv2D:
        return Conv2D(name, layer.conv2d());
      case proto::LayerSpec::kMaxPool:
        return Pool(name, true, layer.max_pool());
      case proto::LayerSpec::kAvgPool:
        return Pool(name, false, layer.avg_pool());
      case proto::LayerSpec::kLrn:
        return Lrn(name, layer.lrn());
      case proto::LayerSpec::kBatchNorm:
        return BatchNorm(name, layer.batch_norm());
      case proto::LayerSpec::kDropout:
        return Dropout(name, layer.dropout());
      case proto::LayerSpec::kDense:
        return Dense(name, layer.dense());
      case proto::LayerSpec::kRelu:
        Apply("Relu", name);
        return OkStatus();
      case proto::LayerSpec::kActivation:
        Apply(layer.activation().function() == proto::ActivationSpec::SIGMOID ? "Sigmoid" : "Tanh",
              name);
        return OkStatus();
      case proto::LayerSpec::kFlatten:
        ToFlat(name);
        return OkStatus();
      case proto::LayerSpec::kEmbedding:
      case proto::LayerSpec::kEmbeddingBag:
        return LooksUpATable(name);
      case proto::LayerSpec::kChannelPad:
        return ChannelPad(name, layer.channel_pad());
      case proto::LayerSpec::kAdd:
      case proto::LayerSpec::kConcat:
      case proto::LayerSpec::kMultiply:
        return InvalidArgument("layer " + name + " takes several inputs");  // Merge's
      case proto::LayerSpec::kDotInteraction:
      case proto::LayerSpec::kCross:
      case proto::LayerSpec::kFm:
        return InvalidArgument("layer " + name +
                               ": ONNX export covers convolutions, pooling, LRN, batch norm, "
                               "dropout, dense, ReLU, flatten, channel padding, add, multiply "
                               "and concat");
      case proto::LayerSpec::KIND_NOT_SET:
        break;
    }
    return InvalidArgument("layer " + name + " has no kind");
  }

  Status Start(const Shape& input_shape) {
    if (input_shape.size() != 3) {
      return InvalidArgument("input_shape " + ShapeString(input_shape) + " is not [H, W, C]");
    }
    h_ = input_shape[0];
    w_ = input_shape[1];
    c_ = input_shape[2];
    return OkStatus();
  }

  // The current tensor as the graph's "logits" output, then "probabilities".
  Status Finish(int64_t classes) {
    if (layout_ != Layout::kFlat || features_ != classes) {
      return InvalidArgument("the last layer must be a dense layer of num_classes (" +
                             std::to_string(classes) + ") units");
    }
    if (graph_->node_size() == 0) return InvalidArgument("the model has no layer");
    graph_->mutable_node(graph_->node_size() - 1)->set_output(0, "logits");
    x_ = "logits";
    onnx::NodeProto* softmax = Node("Softmax", "probabilities", {x_});
    Int(softmax, "axis", 1);
    softmax->set_output(0, "probabilities");
    return OkStatus();
  }

 private:
  onnx::GraphProto* const graph_;
  const std::map<std::string, Tensor>& params_;
  const proto::VariableNaming naming_;
  std::string x_ = "images";
  Layout layout_ = Layout::kNhwc;
  int64_t h_ = 0, w_ = 0, c_ = 0, features_ = 0;
};

void AddFloatValue(const std::string& name, const std::vector<int64_t>& dims,
                   google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* values) {
  onnx::ValueInfoProto* v = values->Add();
  v->set_name(name);
  onnx::TypeProto::Tensor* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  onnx::TensorShapeProto* shape = t->mutable_shape();
  shape->add_dim()->set_dim_param("batch");
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

}  // namespace

StatusOr<onnx::ModelProto> ExportOnnx(const proto::ModelSpec& spec,
                                      const std::map<std::string, Tensor>& params) {
  if (spec.feature_column_size() > 0 || spec.has_wide_deep()) {
    return InvalidArgument("model " + spec.name() +
                           " is a model of feature columns; ONNX export covers dense networks "
                           "(export its tables with --format=projector)");
  }
  for (const proto::LayerSpec& layer : spec.layer()) {
    if (layer.has_embedding() || layer.has_embedding_bag()) {
      return LooksUpATable(layer.name()).Annotate("model " + spec.name());
    }
  }
  onnx::ModelProto model;
  model.set_ir_version(kOnnxIrVersion);
  model.set_producer_name("pstrain");
  model.set_domain("pstrain");
  onnx::OperatorSetIdProto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(kOnnxOpset);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name(spec.name());

  const Shape input_shape(spec.input_shape().begin(), spec.input_shape().end());
  GraphBuilder builder(graph, params, spec.variable_naming());
  PS_RETURN_IF_ERROR(builder.Start(input_shape).Annotate("model " + spec.name()));
  // The layers in the order their inputs allow, each from the tensor of
  // each input it reads.
  std::vector<const proto::LayerSpec*> layers;
  for (const proto::LayerSpec& layer : spec.layer()) layers.push_back(&layer);
  auto topology = nn::WireLayers(layers, {});
  if (!topology.ok()) return topology.status().Annotate("model " + spec.name());
  const GraphBuilder::Flow images = builder.flow();
  std::vector<GraphBuilder::Flow> outputs;
  for (size_t p = 0; p < topology->order.size(); ++p) {
    const proto::LayerSpec& layer = *layers[topology->order[p]];
    std::vector<GraphBuilder::Flow> inputs;
    for (const nn::LayerSource& s : topology->inputs[p]) {
      inputs.push_back(s.kind == nn::LayerSource::kLayer ? outputs[s.index] : images);
    }
    const bool merge = layer.has_add() || layer.has_concat() || layer.has_multiply();
    if (merge) {
      PS_RETURN_IF_ERROR(builder.Merge(layer, inputs).Annotate("model " + spec.name()));
    } else {
      builder.Resume(inputs[0]);
      PS_RETURN_IF_ERROR(builder.Layer(layer).Annotate("model " + spec.name()));
    }
    outputs.push_back(builder.flow());
  }
  PS_RETURN_IF_ERROR(builder.Finish(spec.num_classes()).Annotate("model " + spec.name()));
  AddFloatValue("images", input_shape, graph->mutable_input());
  AddFloatValue("logits", {spec.num_classes()}, graph->mutable_output());
  AddFloatValue("probabilities", {spec.num_classes()}, graph->mutable_output());
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    return Internal("model " + spec.name() + ": ONNX's checker refuses the export: " + e.what());
  }
  return model;
}

}  // namespace pstrain
