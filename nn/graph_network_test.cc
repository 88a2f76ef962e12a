// Networks as graphs: layers that name their inputs, checked against
// central differences, and specs that do not make a graph refused naming
// the layers.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/testing/status_assertions.h"
#include "nn/cpu/cpu_backend.h"
#include "nn/grad_check.h"
#include "nn/graph_model.h"
#include "nn/layers/layers.h"
#include "nn/model_spec.h"

namespace pstrain {
namespace nn {
namespace {

StatusOr<std::unique_ptr<GraphModel>> FromText(const std::string& text) {
  PS_ASSIGN_OR_RETURN(proto::ModelSpec spec, ParseModelSpec(text, "test.pbtxt"));
  return GraphModel::Create(spec);
}

std::vector<Tensor> RandomParams(const Model& model, std::mt19937* rng, float scale) {
  std::vector<Tensor> params;
  for (const VariableSpec& v : model.variables()) {
    params.push_back(RandomTensor(v.shape, rng, -scale, scale));
  }
  return params;
}

// A residual block: layer "in" is read by the block's first dense layer and
// by the add, so its gradient is the sum of both.
constexpr char kResidual[] = R"pbtxt(
  name: "residual" input_shape: [1, 1, 6] num_classes: 3
  layer { name: "flat" flatten {} }
  layer { name: "in" dense { units: 6 weights_initializer { truncated_normal_stddev: 0.3 } biases_initializer { constant: 0 } } }
  layer { name: "a" dense { units: 6 relu: true weights_initializer { truncated_normal_stddev: 0.3 } biases_initializer { constant: 0 } } }
  layer { name: "b" dense { units: 6 weights_initializer { truncated_normal_stddev: 0.3 } biases_initializer { constant: 0 } } }
  layer { name: "sum" add {} inputs: ["in", "b"] }
  layer { name: "relu" relu {} }
  layer { name: "logits" dense { units: 3 weights_initializer { truncated_normal_stddev: 0.3 } biases_initializer { constant: 0 } } }
)pbtxt";

TEST(GraphNetwork, AResidualBlocksGradientsMatchNumerical) {
  auto model = FromText(kResidual);
  PS_ASSERT_OK(model);
  EXPECT_FALSE((*model)->is_chain());
  std::mt19937 rng(3);
  std::vector<Tensor> p = RandomParams(**model, &rng, 0.5f);
  Tensor images = RandomTensor({4, 1, 1, 6}, &rng);
  const std::vector<int32_t> labels = {0, 2, 1, 2};
  std::vector<Tensor> grads;
  PS_ASSERT_OK((*model)->LossAndGradients(p, images, labels, &grads));
  auto loss = [&] {
    std::vector<Tensor> unused;
    return static_cast<double>(*(*model)->LossAndGradients(p, images, labels, &unused));
  };
  GradCheckOptions options;
  options.eps = 1e-3;
  options.atol = 1e-3;
  options.rtol = 2e-2;
  options.kink_tolerant = true;
  ExpectModelGradientsMatch((*model)->variables(), &p, grads, loss, options, &rng);
}

// A chain of the same layers without the add gives another loss: the skip
// connection is really there.
TEST(GraphNetwork, TheSkipConnectionChangesTheOutput) {
  auto residual = FromText(kResidual);
  PS_ASSERT_OK(residual);
  std::string chain_text = kResidual;
  const size_t at = chain_text.find("  layer { name: \"sum\"");
  chain_text.erase(at, chain_text.find('\n', at) - at + 1);
  auto chain = FromText(chain_text);
  PS_ASSERT_OK(chain);
  EXPECT_TRUE((*chain)->is_chain());
  std::mt19937 rng(4);
  std::vector<Tensor> p = RandomParams(**residual, &rng, 0.5f);
  Tensor images = RandomTensor({2, 1, 1, 6}, &rng);
  auto with = (*residual)->Logits(p, ModelInput::Images(images));
  auto without = (*chain)->Logits(p, ModelInput::Images(images));
  PS_ASSERT_OK(with);
  PS_ASSERT_OK(without);
  double differ = 0;
  for (int64_t i = 0; i < with->size(); ++i) differ += std::fabs((*with)[i] - (*without)[i]);
  EXPECT_GT(differ, 1e-3);
}

// Each layer of several inputs, and the channel padding of ResNet's
// shortcuts: every input's and variable's gradient against central
// differences of sum(y * r).
struct MergeCase {
  std::string what, layer;
  std::vector<Shape> inputs;  // one example's
};

class MergeLayers : public ::testing::TestWithParam<MergeCase> {};

TEST_P(MergeLayers, GradientsMatchNumerical) {
  const MergeCase& c = GetParam();
  auto parsed = ParseModelSpec("layer { name: \"m\" " + c.layer + " }", "t");
  PS_ASSERT_OK(parsed);
  const proto::LayerSpec spec = parsed->layer(0);
  auto backend = cpu::CreateCpuBackend();
  PS_ASSERT_OK(backend);
  auto layer = CreateLayer(spec, {backend->get(), 0});
  PS_ASSERT_OK(layer);
  auto out = (*layer)->GraphOutputShape(c.inputs);
  PS_ASSERT_OK(out);
  std::mt19937 rng(11);
  const int64_t batch = 3;
  std::vector<Tensor> xs;
  for (const Shape& s : c.inputs) {
    Shape full = {batch};
    full.insert(full.end(), s.begin(), s.end());
    xs.push_back(RandomTensor(full, &rng));
  }
  std::vector<Tensor> params;
  for (const VariableSpec& v : (*layer)->Variables()) {
    params.push_back(RandomTensor(v.shape, &rng, -0.5f, 0.5f));
  }
  auto run = [&](Tensor* y) {
    std::vector<const Tensor*> in;
    for (const Tensor& x : xs) in.push_back(&x);
    Params p;
    for (const Tensor& t : params) p.push_back(&t);
    return (*layer)->GraphForward(Mode::kTraining, in, p, y);
  };
  Tensor y;
  PS_ASSERT_OK(run(&y));
  ASSERT_EQ(y.size(), batch * NumElements(*out));
  const Tensor r = RandomTensor(y.shape(), &rng);
  std::vector<Tensor> dxs(xs.size()), grads(params.size());
  {
    std::vector<const Tensor*> in;
    for (const Tensor& x : xs) in.push_back(&x);
    std::vector<Tensor*> d;
    for (Tensor& dx : dxs) d.push_back(&dx);
    Params p;
    for (const Tensor& t : params) p.push_back(&t);
    Grads g;
    for (Tensor& t : grads) g.push_back(&t);
    PS_ASSERT_OK((*layer)->GraphBackward(in, y, p, r, d, g));
  }
  auto loss = [&] {
    Tensor out_y;
    EXPECT_TRUE(run(&out_y).ok());
    return Dot(out_y, r);
  };
  GradCheckOptions options;
  options.eps = 1e-2;
  options.atol = 1e-3;
  options.rtol = 1e-3;
  for (size_t i = 0; i < xs.size(); ++i) {
    ExpectGradientMatches(("input " + std::to_string(i)).c_str(), &xs[i], dxs[i], loss, options);
  }
  for (size_t v = 0; v < params.size(); ++v) {
    if (!(*layer)->Variables()[v].trainable) continue;  // an assign_sub delta, not a gradient
    ExpectGradientMatches(("variable " + std::to_string(v)).c_str(), &params[v], grads[v], loss,
                          options);
  }
}

INSTANTIATE_TEST_SUITE_P(
    EveryKind, MergeLayers,
    ::testing::Values(
        MergeCase{"add", "add {}", {{2, 3}, {2, 3}, {2, 3}}},
        MergeCase{"multiply", "multiply {}", {{4}, {4}, {4}}},
        MergeCase{"concat", "concat {}", {{2, 3}, {2, 1}, {2, 2}}},
        MergeCase{"concat_vectors", "concat {}", {{3}, {1, 1, 2}, {1, 4}}},
        MergeCase{"dot_interaction", "dot_interaction {}", {{4}, {4}, {1, 1, 4}}},
        MergeCase{"fm_fields", "fm { dim: 3 }", {{3}, {3}, {3}}},
        MergeCase{"fm_one_input", "fm { dim: 2 }", {{1, 1, 6}}},
        MergeCase{"cross_x0_x", "cross {}", {{5}, {5}}},
        MergeCase{"cross_alone", "cross {}", {{5}}},
        MergeCase{"channel_pad", "channel_pad { before: 1 after: 2 }", {{2, 2, 3}}},
        MergeCase{"sigmoid", "activation { function: SIGMOID }", {{2, 3}}},
        MergeCase{"tanh", "activation { function: TANH }", {{5}}},
        MergeCase{"subsample", "avg_pool { window: 1 stride: 2 }", {{6, 6, 2}}},
        MergeCase{"bn", "batch_norm { epsilon: 0.00001 momentum: 0.997 }", {{4, 4, 2}}},
        MergeCase{"conv_s2",
                  "conv2d { filters: 4 kernel_size: 3 stride: 2 padding: SAME no_bias: true "
                  "weights_initializer { truncated_normal_stddev: 0.3 } }",
                  {{32, 32, 4}}}),
    [](const ::testing::TestParamInfo<MergeCase>& info) { return info.param.what; });

// Sigmoid and tanh give their functions' values (the gradient check above
// holds for any smooth function).
TEST(MergeLayerRules, SigmoidAndTanhGiveTheirValues) {
  auto backend = cpu::CreateCpuBackend();
  PS_ASSERT_OK(backend);
  const Tensor x({1, 3}, {-2.0f, 0.0f, 1.5f});
  for (auto function : {proto::ActivationSpec::SIGMOID, proto::ActivationSpec::TANH}) {
    proto::ActivationSpec spec;
    spec.set_function(function);
    auto layer = CreateActivationLayer("a", spec, {backend->get(), 0});
    PS_ASSERT_OK(layer);
    Tensor y;
    PS_ASSERT_OK((*layer)->Forward(Mode::kInference, x, {}, &y));
    for (int64_t i = 0; i < x.size(); ++i) {
      const double want = function == proto::ActivationSpec::SIGMOID
                              ? 1.0 / (1.0 + std::exp(-static_cast<double>(x[i])))
                              : std::tanh(static_cast<double>(x[i]));
      EXPECT_NEAR(y[i], want, 1e-6)
          << proto::ActivationSpec::Function_Name(function) << " of " << x[i];
    }
  }
}

// The rules themselves, on numbers small enough to work by hand.
TEST(MergeLayerRules, DotInteractionFmAndCrossGiveWhatTheirPapersDefine) {
  auto backend = cpu::CreateCpuBackend();
  PS_ASSERT_OK(backend);
  auto make = [&](const std::string& text) {
    auto spec = ParseModelSpec("layer { name: \"m\" " + text + " }", "t");
    EXPECT_TRUE(spec.ok());
    return std::move(CreateLayer(spec->layer(0), {backend->get(), 0})).value();
  };
  const Tensor a({1, 2}, {1, 2}), b({1, 2}, {3, 4}), c({1, 2}, {5, 6});
  Tensor y;
  auto dot = make("dot_interaction {}");
  PS_ASSERT_OK(dot->GraphOutputShape({{2}, {2}, {2}}).status());
  PS_ASSERT_OK(dot->GraphForward(Mode::kInference, {&a, &b, &c}, {}, &y));
  // [a, b.a, c.a, c.b]
  EXPECT_EQ(std::vector<float>(y.data(), y.data() + y.size()),
            (std::vector<float>{1, 2, 11, 17, 39}));
  auto fm = make("fm { dim: 2 }");
  PS_ASSERT_OK(fm->GraphOutputShape({{2}, {2}, {2}}).status());
  PS_ASSERT_OK(fm->GraphForward(Mode::kInference, {&a, &b, &c}, {}, &y));
  // The sum of the pairs' dot products: 11 + 17 + 39.
  EXPECT_FLOAT_EQ(y[0], 67.0f);
  auto cross = make("cross {}");
  PS_ASSERT_OK(cross->GraphOutputShape({{2}, {2}}).status());
  const Tensor w({2, 2}, {1, 0, 0, 2}), bias({2}, {1, 1});
  PS_ASSERT_OK(cross->GraphForward(Mode::kInference, {&a, &b}, {&w, &bias}, &y));
  // x0 * (x W + b) + x = [1 * (3 + 1) + 3, 2 * (8 + 1) + 4].
  EXPECT_EQ(std::vector<float>(y.data(), y.data() + 2), (std::vector<float>{7, 22}));
}

// Specs that do not make a graph are refused at the start, in one line
// naming the layers.
TEST(GraphNetwork, SpecsThatAreNotAGraphAreRefusedNamingTheLayers) {
  const std::string head = R"(name: "g" input_shape: [1, 1, 4] num_classes: 2 )";
  const std::string logits =
      R"(dense { units: 2 weights_initializer { constant: 0.1 } biases_initializer { constant: 0 } })";
  const std::string hidden =
      R"(dense { units: 4 weights_initializer { constant: 0.1 } biases_initializer { constant: 0 } })";
  struct Case {
    std::string what, layers, says;
  };
  const std::vector<Case> cases = {
      {"a cycle",
       "layer { name: \"a\" " + hidden + " inputs: [\"c\"] } layer { name: \"b\" " + hidden +
           " inputs: [\"a\"] } layer { name: \"c\" add {} inputs: [\"b\", \"input\"] } "
           "layer { name: \"out\" " +
           logits + " inputs: [\"c\"] }",
       "layers a -> b -> c -> a form a cycle"},
      {"a dangling input", "layer { name: \"out\" " + logits + " inputs: [\"nowhere\"] }",
       "layer out reads nowhere, which is no layer"},
      {"two outputs",
       "layer { name: \"a\" " + hidden + " } layer { name: \"out\" " + logits +
           " inputs: [\"input\"] }",
       "layers a, out are read by no layer"},
      {"shapes that do not meet",
       "layer { name: \"a\" " + hidden +
           " } layer { name: \"b\" dense { units: 3 weights_initializer { constant: 0.1 } "
           "biases_initializer { constant: 0 } } inputs: [\"input\"] } "
           "layer { name: \"sum\" add {} inputs: [\"a\", \"b\"] } layer { name: \"out\" " +
           logits + " }",
       "layer sum (add): inputs of shapes [4] and [3] do not meet"},
      {"two layers of one name",
       "layer { name: \"a\" " + hidden + " } layer { name: \"a\" " + logits + " }",
       "two layers are named a"},
      {"one input to a layer of several",
       "layer { name: \"sum\" add {} } layer { name: \"out\" " + logits + " }",
       "layer sum (add): takes at least 2 inputs, not 1"},
      {"two inputs to a layer of one",
       "layer { name: \"flat\" flatten {} } layer { name: \"out\" " + logits +
           " inputs: [\"flat\", \"flat\"] }",
       "layer out (dense): takes one input, not 2"},
  };
  for (const Case& c : cases) {
    auto model = FromText(head + c.layers);
    ASSERT_FALSE(model.ok()) << c.what;
    EXPECT_EQ(model.status().code(), Code::kInvalidArgument) << c.what;
    EXPECT_NE(model.status().message().find(c.says), std::string::npos)
        << c.what << ": " << model.status().ToString();
    EXPECT_EQ(model.status().message().find('\n'), std::string::npos) << c.what;
  }
}

// A model of ids whose layers read its embedding layers apart: DeepFM's
// shape, an fm over the fields beside a dense layer over them all. The
// rows' gradients go back to each field's columns.
TEST(GraphNetwork, LayersReadEachEmbeddingOfAModelOfIds) {
  auto spec = ParseModelSpec(R"pbtxt(
    name: "fields" num_classes: 2
    input { examples { feature { name: "f1" } feature { name: "f2" } } }
    layer { name: "e1" embedding { feature: "f1" dim: 3 } }
    layer { name: "e2" embedding { feature: "f2" dim: 3 } }
    layer { name: "fm" fm { dim: 3 } inputs: ["e1", "e2"] }
    layer { name: "deep" dense { units: 2 weights_initializer { truncated_normal_stddev: 0.3 } biases_initializer { constant: 0 } } inputs: ["input"] }
    layer { name: "fm_out" concat {} inputs: ["fm", "deep"] }
    layer { name: "logits" dense { units: 2 weights_initializer { truncated_normal_stddev: 0.3 } biases_initializer { constant: 0 } } }
  )pbtxt",
                             "t");
  PS_ASSERT_OK(spec);
  proto::ModelSpec chain = *spec;
  // The same layers on the front's output as a plain input, with the
  // embeddings as named parts: the gradient to the input is checked.
  chain.clear_layer();
  chain.clear_input();
  for (int i = 2; i < spec->layer_size(); ++i) *chain.add_layer() = spec->layer(i);
  for (int64_t d : {1, 1, 6}) chain.add_input_shape(d);
  auto model = GraphModel::CreateChain(chain, 0, {{"e1", 0, 3}, {"e2", 3, 3}});
  PS_ASSERT_OK(model);
  std::mt19937 rng(8);
  std::vector<Tensor> p = RandomParams(**model, &rng, 0.5f);
  Tensor input = RandomTensor({2, 1, 1, 6}, &rng);
  auto out = (*model)->ChainForward(Mode::kTraining, p, input);
  PS_ASSERT_OK(out);
  const Tensor r = RandomTensor((*out)->shape(), &rng);
  std::vector<Tensor> grads;
  Tensor dinput;
  PS_ASSERT_OK((*model)->ChainBackward(p, input, r, &grads, &dinput).status());
  auto loss = [&] {
    auto y = (*model)->ChainForward(Mode::kTraining, p, input);
    return Dot(**y, r);
  };
  GradCheckOptions options;
  options.eps = 1e-2;
  options.atol = 1e-3;
  options.rtol = 1e-3;
  ExpectGradientMatches("input", &input, dinput, loss, options);
  // The model of ids builds: its embedding layers are the parts.
  auto ids = GraphModel::Create(*spec);
  PS_ASSERT_OK(ids);
  EXPECT_EQ((*ids)->layers()[2].inputs, (std::vector<std::string>{"e1", "e2"}));
}

}  // namespace
}  // namespace nn
}  // namespace pstrain
