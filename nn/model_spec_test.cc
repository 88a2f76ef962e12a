// Model specs that do not parse or hold together are refused with one line
// naming the layer and the problem; a user's own network builds and trains.
#include "nn/model_spec.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/testing/status_assertions.h"
#include "data/text_dataset.h"
#include "nn/grad_check.h"
#include "nn/graph_model.h"

namespace pstrain {
namespace nn {
namespace {

const char* const kTinyNet = R"pb(
  name: "tiny"
  input_shape: [ 8, 8, 2 ]
  num_classes: 3
  layer {
    name: "conv"
    conv2d {
      filters: 4
      kernel_size: 3
      relu: true
      weights_initializer { truncated_normal_stddev: 0.1 }
      biases_initializer { constant: 0 }
    }
  }
  layer {
    name: "pool"
    avg_pool { window: 2 }
  }
  layer {
    name: "norm"
    lrn { depth_radius: 1 bias: 1 alpha: 0.1 beta: 0.75 }
  }
  layer {
    name: "drop"
    dropout { keep_prob: 0.5 }
  }
  layer {
    name: "bn"
    batch_norm {}
  }
  layer {
    name: "flat"
    flatten {}
  }
  layer {
    name: "logits"
    dense {
      units: 3
      weight_decay: 0.01
      weights_initializer { truncated_normal_stddev: 0.1 }
      biases_initializer { constant: 0 }
    }
  }
)pb";

Status Build(const std::string& text) {
  PS_ASSIGN_OR_RETURN(proto::ModelSpec spec, ParseModelSpec(text, "test.pbtxt"));
  return GraphModel::Create(spec).status();
}

TEST(ModelSpec, BuiltinsBuild) {
  for (const std::string& name : BuiltinModelNames()) {
    auto spec = LoadModelSpec(name);
    ASSERT_TRUE(spec.ok()) << name << ": " << spec.status().ToString();
    if (spec->input().has_text() && spec->num_classes() == 0) {
      // A model of text takes its classes from its training file's labels.
      const std::string dir = ::testing::TempDir() + "/builtin_" + name;
      std::filesystem::create_directories(dir);
      std::ofstream(dir + "/" + spec->input().text().train_file())
          << "__label__a x y\n__label__b y\n__label__c z\n__label__a w\n";
      PS_ASSERT_OK(data::TakeClassesFromText(&*spec, dir));
      EXPECT_EQ(spec->num_classes(), 3) << name;
      EXPECT_EQ(spec->layer(spec->layer_size() - 1).dense().units(), 3) << name;
    }
    auto model = CreateModel(*spec);
    EXPECT_TRUE(model.ok()) << name << ": " << model.status().ToString();
  }
  EXPECT_EQ(
      BuiltinModelNames(),
      (std::vector<std::string>{"cifar10", "dcn", "deepfm", "dlrm", "fasttext", "mnist", "mnist_bn",
                                "mnist_ids", "movielens", "resnet20", "wide_deep"}));
}

TEST(ModelSpec, EveryKindOfBadSpecIsRefusedNamingTheProblem) {
  struct Case {
    std::string what, text;
    Code code;
    std::string says;
  };
  const std::string head = "name: \"net\" input_shape: [8, 8, 2] num_classes: 3 ";
  const std::string logits =
      "layer { name: \"logits\" dense { units: 3 weights_initializer { constant: 0 } "
      "biases_initializer { constant: 0 } } }";
  const std::vector<Case> cases = {
      {"unknown layer kind", head + "layer { name: \"x\" softmax {} }", Code::kInvalidArgument,
       "test.pbtxt:1:"},
      {"unknown field", head + "layer { name: \"p\" max_pool { window: 2 size: 3 } }",
       Code::kInvalidArgument, "size"},
      {"no kind", head + "layer { name: \"x\" }" + logits, Code::kInvalidArgument,
       "layer x (?): no kind"},
      {"no name", head + "layer { relu {} }" + logits, Code::kInvalidArgument,
       "layer #1 (relu): no name"},
      {"window larger than the input",
       head + "layer { name: \"p\" max_pool { window: 9 padding: VALID } }" + logits,
       Code::kInvalidArgument, "layer p (max_pool): input [8,8,2] is smaller than the window"},
      {"zero filters",
       head +
           "layer { name: \"c\" conv2d { kernel_size: 3 weights_initializer { constant: 1 } "
           "biases_initializer { constant: 0 } } }" +
           logits,
       Code::kInvalidArgument, "layer c (conv2d): filters and kernel_size must be > 0"},
      {"no initializer", head + "layer { name: \"d\" dense { units: 3 } }", Code::kInvalidArgument,
       "layer d (dense): weights_initializer: no initializer"},
      {"bad keep_prob", head + "layer { name: \"d\" dropout { keep_prob: 2 } }" + logits,
       Code::kInvalidArgument, "layer d (dropout): dropout: keep_prob must be in (0, 1]"},
      {"two layers of one name", head + logits + logits, Code::kInvalidArgument,
       "model net: two layers are named logits"},
      {"logits of the wrong size",
       head + "layer { name: \"d\" dense { units: 4 weights_initializer { constant: 0 } "
              "biases_initializer { constant: 0 } } }",
       Code::kInvalidArgument, "the last layer gives [4], the logits must be [3]"},
      {"lrn after flatten",
       head +
           "layer { name: \"f\" flatten {} } layer { name: \"n\" lrn { "
           "bias: 1 } }" +
           logits,
       Code::kInvalidArgument, "layer n (lrn): input [128] is not HWC"},
      {"no layers", head, Code::kInvalidArgument, "no layers"},
      // Found by the model_spec fuzz target: SAME padding takes any kernel
      // size, and counting its FLOPs overflowed before the weights were
      // checked.
      {"an absurd kernel under SAME padding",
       head +
           "layer { name: \"c\" conv2d { filters: 8 kernel_size: 2222222222222223 "
           "weights_initializer { constant: 1 } biases_initializer { constant: 0 } } }" +
           logits,
       Code::kInvalidArgument,
       "layer c (conv2d): weights [2222222222222223,2222222222222223,2,8] are too large"},
      {"bad input shape", "input_shape: [8, 8] num_classes: 3 " + logits, Code::kInvalidArgument,
       "input_shape must be three positive sizes"},
      // Found by the model_spec fuzz target: the sizes were multiplied
      // before they were checked.
      {"negative input sizes",
       "input_shape: [444443, -2, -444444444444443] num_classes: 3 " + logits,
       Code::kInvalidArgument, "input_shape must be three positive sizes"},
  };
  for (const Case& c : cases) {
    Status s = Build(c.text);
    EXPECT_EQ(s.code(), c.code) << c.what << ": " << s.ToString();
    EXPECT_NE(s.message().find(c.says), std::string::npos) << c.what << ": " << s.ToString();
  }
}

TEST(ModelSpec, MissingFileIsNotFound) {
  auto spec = LoadModelSpec("/nonexistent/net.pbtxt");
  EXPECT_EQ(spec.status().code(), Code::kNotFound);
  EXPECT_NE(spec.status().message().find(
                "cifar10, dcn, deepfm, dlrm, fasttext, mnist, mnist_bn, mnist_ids, movielens, "
                "resnet20, wide_deep"),
            std::string::npos);
}

// A user's network from a file, with every layer kind: a few steps of plain
// gradient descent on one batch lower its loss.
TEST(ModelSpec, UserNetworkFromAFileTrains) {
  const std::string path = ::testing::TempDir() + "/tiny.pbtxt";
  std::ofstream(path) << kTinyNet;
  auto spec = LoadModelSpec(path);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  auto model = GraphModel::Create(*spec, /*seed=*/5);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  std::vector<Tensor> p;
  for (const auto& v : (*model)->variables()) p.push_back(InitialValue(v, 1));
  std::mt19937 rng(7);
  Tensor images = RandomTensor({6, 8, 8, 2}, &rng);
  std::vector<int32_t> labels = {0, 1, 2, 0, 1, 2};
  std::vector<Tensor> g;
  auto first = (*model)->LossAndGradients(p, images, labels, &g);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  float last = *first;
  for (int step = 0; step < 30; ++step) {
    auto loss = (*model)->LossAndGradients(p, images, labels, &g);
    PS_ASSERT_OK(loss);
    last = *loss;
    for (size_t v = 0; v < p.size(); ++v) {
      if (!(*model)->variables()[v].trainable) continue;
      for (int64_t i = 0; i < p[v].size(); ++i) p[v][i] -= 0.5f * g[v][i];
    }
  }
  EXPECT_LT(last, 0.8f * *first);
}

// What a model's reported loss is, for the logs' labels: fastText's every
// example counts whole (SUM), wide_deep sums by default as TF 1.x's canned
// estimators, a chain of layers takes the mean.
TEST(ModelSpec, SumsLossOverBatchAsTheSpecSays) {
  for (const auto& [name, sums] : std::vector<std::pair<std::string, bool>>{
           {"mnist", false}, {"cifar10", false}, {"fasttext", true}, {"wide_deep", true}}) {
    auto spec = LoadModelSpec(name);
    ASSERT_TRUE(spec.ok()) << spec.status().ToString();
    EXPECT_EQ(SumsLossOverBatch(*spec), sums) << name;
  }
  proto::ModelSpec wide_deep_mean = *LoadModelSpec("wide_deep");
  wide_deep_mean.set_loss_reduction(proto::MEAN);
  EXPECT_FALSE(SumsLossOverBatch(wide_deep_mean));
}

}  // namespace
}  // namespace nn
}  // namespace pstrain
