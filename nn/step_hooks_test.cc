// StepHooks (nn/step_hooks.h): a model reads each variable only after its
// ParamReady, hands each gradient on in backward order once it is final,
// and computes exactly what it computes without hooks.
#include "nn/step_hooks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "core/testing/status_assertions.h"
#include "nn/model_spec.h"
#include "nn/towers.h"

namespace pstrain {
namespace nn {
namespace {

// Plays the worker's transfers: a variable's value arrives (is copied into
// the params the model reads) only when the model asks for it; each
// gradient is copied away when it is handed on.
class ArrivingParams : public StepHooks {
 public:
  ArrivingParams(const std::vector<Tensor>& values, std::vector<Tensor>* params,
                 std::vector<Tensor>* grads)
      : values_(values), params_(params), grads_(grads) {}

  Status ParamReady(size_t v) override {
    events.push_back("param " + std::to_string(v));
    (*params_)[v] = values_[v];
    return OkStatus();
  }
  Status GradientReady(size_t v) override {
    events.push_back("grad " + std::to_string(v));
    handed_on[v] = (*grads_)[v];
    return OkStatus();
  }

  std::vector<std::string> events;
  std::map<size_t, Tensor> handed_on;

 private:
  const std::vector<Tensor>& values_;
  std::vector<Tensor>* const params_;
  std::vector<Tensor>* const grads_;
};

struct Inputs {
  std::vector<Tensor> values;
  Tensor images;
  std::vector<int32_t> labels;
};

Inputs RandomInputs(const Model& model, int batch) {
  Inputs in;
  for (const VariableSpec& v : model.variables()) in.values.push_back(InitialValue(v, 4));
  Shape shape = model.example_shape();
  shape.insert(shape.begin(), batch);
  in.images = Tensor(shape);
  std::mt19937 rng(2);
  std::normal_distribution<float> pixel;
  for (int64_t i = 0; i < in.images.size(); ++i) in.images[i] = pixel(rng);
  for (int i = 0; i < batch; ++i) in.labels.push_back(static_cast<int32_t>(rng() % 10));
  return in;
}

bool SameBits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && std::memcmp(a.data(), b.data(), a.bytes()) == 0;
}

// Params of the right shapes holding NaN: read before its ParamReady, a
// variable would poison the loss.
std::vector<Tensor> Poisoned(const std::vector<Tensor>& values) {
  std::vector<Tensor> params;
  for (const Tensor& v : values) {
    params.emplace_back(v.shape());
    params.back().Fill(std::numeric_limits<float>::quiet_NaN());
  }
  return params;
}

TEST(StepHooks, EachLayerWaitsForItsOwnVariablesAndGradientsGoOutLastLayerFirst) {
  auto spec = LoadModelSpec("mnist");
  PS_ASSERT_OK(spec);
  auto model = CreateModel(*spec);
  PS_ASSERT_OK(model);
  const Inputs in = RandomInputs(**model, 8);
  std::vector<Tensor> expected;
  auto plain = (*model)->LossAndGradients(in.values, in.images, in.labels, &expected);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();

  std::vector<Tensor> params = Poisoned(in.values), grads;
  ArrivingParams hooks(in.values, &params, &grads);
  auto hooked = (*model)->LossAndGradients(params, in.images, in.labels, &grads, &hooks);
  ASSERT_TRUE(hooked.ok()) << hooked.status().ToString();
  EXPECT_EQ(*hooked, *plain);

  // mnist: conv1, conv2, local3, local4, softmax_linear, weights then
  // biases: variables 0..9 asked for in order, gradients back layer by layer.
  const std::vector<std::string> want = {"param 0", "param 1", "param 2", "param 3", "param 4",
                                         "param 5", "param 6", "param 7", "param 8", "param 9",
                                         "grad 8",  "grad 9",  "grad 6",  "grad 7",  "grad 4",
                                         "grad 5",  "grad 2",  "grad 3",  "grad 0",  "grad 1"};
  EXPECT_EQ(hooks.events, want);
  for (size_t v = 0; v < expected.size(); ++v) {
    EXPECT_TRUE(SameBits(hooks.handed_on[v], expected[v])) << (*model)->variables()[v].name;
  }
}

TEST(StepHooks, SeveralTowersWaitForEveryVariableAndHandOnTheMean) {
  auto spec = LoadModelSpec("mnist");
  PS_ASSERT_OK(spec);
  auto towers = Towers::Create(*spec, 2);
  PS_ASSERT_OK(towers);
  const Inputs in = RandomInputs(**towers, 8);
  std::vector<Tensor> expected;
  PS_ASSERT_OK((*towers)->LossAndGradients(in.values, in.images, in.labels, &expected));

  std::vector<Tensor> params = Poisoned(in.values), grads;
  ArrivingParams hooks(in.values, &params, &grads);
  PS_ASSERT_OK((*towers)->LossAndGradients(params, in.images, in.labels, &grads, &hooks));
  ASSERT_EQ(hooks.events.size(), 2 * expected.size());
  for (size_t v = 0; v < expected.size(); ++v) {
    EXPECT_EQ(hooks.events[v], "param " + std::to_string(v));
    EXPECT_TRUE(SameBits(hooks.handed_on[v], expected[v]));
  }
}

TEST(StepHooks, AFailedWaitEndsTheStepWithItsError) {
  class FailingPull : public StepHooks {
   public:
    Status ParamReady(size_t v) override {
      return v < 3 ? OkStatus() : Unavailable("ps:0 went away");
    }
    Status GradientReady(size_t) override {
      ADD_FAILURE() << "no gradient without a forward pass";
      return OkStatus();
    }
  } hooks;
  auto spec = LoadModelSpec("mnist");
  PS_ASSERT_OK(spec);
  auto model = CreateModel(*spec);
  PS_ASSERT_OK(model);
  const Inputs in = RandomInputs(**model, 4);
  std::vector<Tensor> grads;
  auto r = (*model)->LossAndGradients(in.values, in.images, in.labels, &grads, &hooks);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
}

}  // namespace
}  // namespace nn
}  // namespace pstrain
