#include "export/onnx_export.h"

#include <gtest/gtest.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "nn/model.h"
#include "nn/model_spec.h"

namespace pstrain {
namespace {

struct Exported {
  proto::ModelSpec spec;
  std::map<std::string, Tensor> params;
  onnx::ModelProto model;
};

// A model's variables at their initial values.
std::map<std::string, Tensor> InitialParams(const proto::ModelSpec& spec) {
  auto model = nn::CreateModel(spec);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  std::map<std::string, Tensor> params;
  for (const nn::VariableSpec& v : (*model)->variables()) {
    Tensor t = nn::InitialValue(v, 7);
    // Batch-norm statistics away from 0 and 1, so that a swap would show.
    if (v.name.find("moving_") != std::string::npos) {
      for (int64_t i = 0; i < t.size(); ++i) t[i] = 0.5f + 0.01f * static_cast<float>(i);
    }
    params.emplace(v.name, std::move(t));
  }
  return params;
}

Exported Export(const std::string& name) {
  Exported e;
  auto spec = nn::LoadModelSpec(name);
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  e.spec = *spec;
  e.params = InitialParams(e.spec);
  auto model = ExportOnnx(e.spec, e.params);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  if (model.ok()) e.model = *model;
  return e;
}

const onnx::NodeProto* FindNode(const onnx::ModelProto& m, const std::string& name) {
  for (const onnx::NodeProto& n : m.graph().node()) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}

const onnx::AttributeProto* Attr(const onnx::NodeProto& n, const std::string& name) {
  for (const onnx::AttributeProto& a : n.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

std::vector<int64_t> Ints(const onnx::NodeProto& n, const std::string& name) {
  const onnx::AttributeProto* a = Attr(n, name);
  return a == nullptr ? std::vector<int64_t>{}
                      : std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::vector<float> InitializerValues(const onnx::ModelProto& m, const std::string& name,
                                     std::vector<int64_t>* dims) {
  for (const onnx::TensorProto& t : m.graph().initializer()) {
    if (t.name() != name) continue;
    dims->assign(t.dims().begin(), t.dims().end());
    std::vector<float> values(t.raw_data().size() / sizeof(float));
    std::memcpy(values.data(), t.raw_data().data(), t.raw_data().size());
    return values;
  }
  ADD_FAILURE() << "no initializer " << name;
  return {};
}

// The shape ONNX's own shape inference gives an output (its declared shape
// dropped first), as [d0, d1, ...] with -1 for a symbolic dimension.
std::vector<int64_t> InferredShape(onnx::ModelProto model, const std::string& output) {
  for (onnx::ValueInfoProto& v : *model.mutable_graph()->mutable_output()) {
    v.mutable_type()->mutable_tensor_type()->clear_shape();
  }
  onnx::ShapeInferenceOptions options{/*check_type=*/true, /*error_mode=*/1};
  onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
  for (const onnx::ValueInfoProto& v : model.graph().output()) {
    if (v.name() != output) continue;
    std::vector<int64_t> dims;
    for (const auto& d : v.type().tensor_type().shape().dim()) {
      dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
    }
    return dims;
  }
  return {};
}

class BuiltinNetworks : public ::testing::TestWithParam<std::string> {};

// ONNX's checker passes and its shape inference, run strictly over the
// whole graph, agrees with pstrain: logits [batch, classes].
TEST_P(BuiltinNetworks, PassTheCheckerAndInferToTheLogitsShape) {
  const Exported e = Export(GetParam());
  EXPECT_EQ(e.model.opset_import(0).version(), kOnnxOpset);
  EXPECT_NO_THROW(onnx::checker::check_model(e.model));
  EXPECT_EQ(InferredShape(e.model, "logits"), (std::vector<int64_t>{-1, e.spec.num_classes()}));
  EXPECT_EQ(InferredShape(e.model, "probabilities"),
            (std::vector<int64_t>{-1, e.spec.num_classes()}));
}

// Every variable is exported, a conv kernel transposed from HWIO to OIHW and
// everything else as it is.
TEST_P(BuiltinNetworks, ExportEveryVariableInOnnxLayouts) {
  const Exported e = Export(GetParam());
  for (const auto& [name, value] : e.params) {
    std::vector<int64_t> dims;
    const std::vector<float> got = InitializerValues(e.model, name, &dims);
    ASSERT_EQ(static_cast<int64_t>(got.size()), value.size()) << name;
    const Shape& s = value.shape();
    if (s.size() == 4) {  // [kh, kw, in, out] -> [out, in, kh, kw]
      ASSERT_EQ(dims, (std::vector<int64_t>{s[3], s[2], s[0], s[1]})) << name;
      for (int64_t y = 0; y < s[0]; ++y) {
        for (int64_t x = 0; x < s[1]; ++x) {
          for (int64_t i = 0; i < s[2]; ++i) {
            for (int64_t o = 0; o < s[3]; ++o) {
              ASSERT_EQ(got[((o * s[2] + i) * s[0] + y) * s[1] + x],
                        value.data()[((y * s[1] + x) * s[2] + i) * s[3] + o])
                  << name;
            }
          }
        }
      }
    } else {
      ASSERT_EQ(dims, std::vector<int64_t>(s.begin(), s.end())) << name;
      for (int64_t i = 0; i < value.size(); ++i) ASSERT_EQ(got[i], value.data()[i]) << name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(OnnxExport, BuiltinNetworks,
                         ::testing::Values("mnist", "mnist_bn", "cifar10", "resnet20"));

// cifar10's windows: SAME pads as TF splits them (24 -> 12 by a 3x3 window
// of stride 2 pads 1 after, none before); LRN's alpha times the window,
// since ONNX divides the sum of squares by the window and TF does not.
TEST(OnnxExport, Cifar10PadsAsTensorFlowAndScalesLrnAlpha) {
  const Exported e = Export("cifar10");
  const onnx::NodeProto* pool1 = FindNode(e.model, "pool1");
  ASSERT_NE(pool1, nullptr);
  EXPECT_EQ(pool1->op_type(), "MaxPool");
  EXPECT_EQ(Ints(*pool1, "pads"), (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_EQ(Ints(*pool1, "strides"), (std::vector<int64_t>{2, 2}));
  const onnx::NodeProto* conv1 = FindNode(e.model, "conv1/Conv2D");
  ASSERT_NE(conv1, nullptr);
  EXPECT_EQ(Ints(*conv1, "pads"), (std::vector<int64_t>{2, 2, 2, 2}));  // 5x5, stride 1
  const onnx::NodeProto* norm1 = FindNode(e.model, "norm1");
  ASSERT_NE(norm1, nullptr);
  EXPECT_EQ(Attr(*norm1, "size")->i(), 9);
  EXPECT_FLOAT_EQ(Attr(*norm1, "alpha")->f(), 0.00011111111111111f * 9);
  EXPECT_FLOAT_EQ(Attr(*norm1, "beta")->f(), 0.75f);
  EXPECT_FLOAT_EQ(Attr(*norm1, "bias")->f(), 1.0f);
  // The input goes to NCHW once, and back to NHWC before the first flatten.
  int transposes = 0;
  for (const onnx::NodeProto& n : e.model.graph().node()) transposes += n.op_type() == "Transpose";
  EXPECT_EQ(transposes, 2);
  EXPECT_EQ(Ints(*FindNode(e.model, "local3/to_nhwc"), "perm"), (std::vector<int64_t>{0, 2, 3, 1}));
}

// mnist_bn's batch norm runs in inference mode on the moving statistics
// with the layer's epsilon.
TEST(OnnxExport, BatchNormUsesTheMovingStatistics) {
  const Exported e = Export("mnist_bn");
  const onnx::NodeProto* bn = FindNode(e.model, "conv1/batch_normalization");
  ASSERT_NE(bn, nullptr);
  EXPECT_EQ(bn->op_type(), "BatchNormalization");
  ASSERT_EQ(bn->input_size(), 5);
  EXPECT_EQ(bn->input(1), "conv1/batch_normalization/gamma");
  EXPECT_EQ(bn->input(2), "conv1/batch_normalization/beta");
  EXPECT_EQ(bn->input(3), "conv1/batch_normalization/moving_mean");
  EXPECT_EQ(bn->input(4), "conv1/batch_normalization/moving_variance");
  EXPECT_EQ(bn->output_size(), 1);  // inference: Y only
  EXPECT_FLOAT_EQ(Attr(*bn, "epsilon")->f(), 1e-3f);
}

proto::ModelSpec Spec(const std::string& text) {
  auto spec = nn::ParseModelSpec(text, "test");
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return *spec;
}

// Dropout is an inference-mode Dropout node (the identity) with the rate
// 1 - keep_prob; average pooling counts only the cells inside the input, as
// TF's SAME does.
TEST(OnnxExport, DropoutAndAveragePooling) {
  const proto::ModelSpec spec = Spec(R"(
    name: "small" input_shape: [6, 6, 2] num_classes: 3
    layer { name: "pool" avg_pool { window: 3 stride: 2 padding: SAME } }
    layer { name: "drop" dropout { keep_prob: 0.75 } }
    layer { name: "out" dense { units: 3 weights_initializer { constant: 0.5 }
                                biases_initializer { constant: 0 } } })");
  auto model = ExportOnnx(spec, InitialParams(spec));
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const onnx::NodeProto* drop = FindNode(*model, "drop");
  ASSERT_NE(drop, nullptr);
  EXPECT_EQ(drop->op_type(), "Dropout");
  ASSERT_EQ(drop->input_size(), 2);  // no training_mode
  std::vector<int64_t> dims;
  EXPECT_EQ(InitializerValues(*model, "drop/rate", &dims), std::vector<float>{0.25f});
  EXPECT_TRUE(dims.empty());
  const onnx::NodeProto* pool = FindNode(*model, "pool");
  EXPECT_EQ(Attr(*pool, "count_include_pad")->i(), 0);
  EXPECT_EQ(InferredShape(*model, "logits"), (std::vector<int64_t>{-1, 3}));
}

// What ONNX export does not cover, and a checkpoint that does not hold the
// model, are refused naming the layer or the variable.
TEST(OnnxExport, RefusesWhatItCannotExport) {
  const proto::ModelSpec ids = *nn::LoadModelSpec("mnist_ids");
  auto refused = ExportOnnx(ids, {});
  EXPECT_EQ(refused.status().code(), Code::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("looks up an embedding table"), std::string::npos)
      << refused.status().ToString();

  const proto::ModelSpec wide = *nn::LoadModelSpec("wide_deep");
  refused = ExportOnnx(wide, {});
  EXPECT_NE(refused.status().message().find("model of feature columns"), std::string::npos)
      << refused.status().ToString();

  const proto::ModelSpec mnist = *nn::LoadModelSpec("mnist");
  std::map<std::string, Tensor> params = InitialParams(mnist);
  params.erase("local3/biases");
  refused = ExportOnnx(mnist, params);
  EXPECT_NE(refused.status().message().find("variable local3/biases is not in the checkpoint"),
            std::string::npos)
      << refused.status().ToString();
  params = InitialParams(mnist);
  params.at("conv2/weights") = Tensor({5, 5, 32, 32});
  refused = ExportOnnx(mnist, params);
  EXPECT_NE(refused.status().message().find(
                "variable conv2/weights has shape [5,5,32,32], the model's [5,5,32,64]"),
            std::string::npos)
      << refused.status().ToString();
}

}  // namespace
}  // namespace pstrain
