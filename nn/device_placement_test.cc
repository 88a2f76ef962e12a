// A model on a device backend: every kernel gets its operands in device
// memory (the fake device refuses any other), the step uploads the images
// and each variable once and downloads each gradient once, and loss,
// gradients and logits are the CPU backend's bit for bit.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "core/testing/status_assertions.h"
#include "nn/fake_device_backend.h"
#include "nn/graph_model.h"
#include "nn/model_spec.h"

namespace pstrain {
namespace nn {
namespace {

// Every kind of layer, with a convolution without bias and weight decay.
const char* const kEveryLayer = R"pb(
  name: "every"
  input_shape: [ 9, 9, 3 ]
  num_classes: 4
  layer {
    name: "conv"
    conv2d {
      filters: 6
      kernel_size: 3
      relu: true
      no_bias: true
      weight_decay: 0.01
      weights_initializer { truncated_normal_stddev: 0.2 }
    }
  }
  layer {
    name: "maxpool"
    max_pool { window: 3 stride: 2 }
  }
  layer {
    name: "norm"
    lrn { depth_radius: 2 bias: 1 alpha: 0.1 beta: 0.75 }
  }
  layer {
    name: "avgpool"
    avg_pool { window: 2 stride: 1 }
  }
  layer {
    name: "bn"
    batch_norm {}
  }
  layer {
    name: "relu"
    relu {}
  }
  layer {
    name: "drop"
    dropout { keep_prob: 0.7 }
  }
  layer {
    name: "flat"
    flatten {}
  }
  layer {
    name: "logits"
    dense {
      units: 4
      weight_decay: 0.02
      weights_initializer { truncated_normal_stddev: 0.2 }
      biases_initializer { constant: 0.1 }
    }
  }
)pb";

void ExpectSame(const Tensor& a, const Tensor& b, const std::string& what) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  ASSERT_EQ(a.device(), nullptr) << what << " was not downloaded";
  for (int64_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << what << " [" << i << "]";
}

class DevicePlacement : public ::testing::TestWithParam<std::string> {};

TEST_P(DevicePlacement, MatchesTheHostAndMovesEachTensorOnce) {
  auto spec = GetParam() == "every" ? ParseModelSpec(kEveryLayer, "every.pbtxt")
                                    : LoadModelSpec(GetParam());
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  FakeDeviceCounters counters;
  {
    auto backend = CreateFakeDeviceBackend(&counters);
    PS_ASSERT_OK(backend);
    auto device = GraphModel::Create(*spec, 5, std::move(backend).value());
    ASSERT_TRUE(device.ok()) << device.status().ToString();
    auto host = GraphModel::Create(*spec, 5);
    PS_ASSERT_OK(host);
    EXPECT_NE((*device)->backend().find("fake device"), std::string::npos);

    std::vector<Tensor> params;
    for (const VariableSpec& v : (*host)->variables()) params.push_back(InitialValue(v, 3));
    Shape shape = (*host)->example_shape();
    shape.insert(shape.begin(), 6);
    Tensor images(shape);
    std::mt19937 rng(2);
    std::normal_distribution<float> pixel;
    for (int64_t i = 0; i < images.size(); ++i) images[i] = pixel(rng);
    std::vector<int32_t> labels;
    for (int i = 0; i < 6; ++i)
      labels.push_back(static_cast<int32_t>(rng() % (*host)->num_classes()));

    const int64_t num_vars = static_cast<int64_t>(params.size());
    for (int step = 0; step < 2; ++step) {  // the second reuses the device buffers
      std::vector<Tensor> g_device, g_host;
      counters.uploads = counters.downloads = 0;
      auto loss_device = (*device)->LossAndGradients(params, images, labels, &g_device);
      ASSERT_TRUE(loss_device.ok()) << loss_device.status().ToString();
      EXPECT_EQ(counters.uploads, num_vars + 1);  // the variables and the images
      EXPECT_EQ(counters.downloads, num_vars);    // the gradients
      auto loss_host = (*host)->LossAndGradients(params, images, labels, &g_host);
      PS_ASSERT_OK(loss_host);
      EXPECT_EQ(*loss_device, *loss_host);
      ASSERT_EQ(g_device.size(), g_host.size());
      for (size_t v = 0; v < g_host.size(); ++v) {
        ExpectSame(g_device[v], g_host[v], (*host)->variables()[v].name);
      }
    }
    auto logits_device = (*device)->Logits(params, images);
    auto logits_host = (*host)->Logits(params, images);
    ASSERT_TRUE(logits_device.ok()) << logits_device.status().ToString();
    PS_ASSERT_OK(logits_host);
    ExpectSame(*logits_device, *logits_host, "logits");
  }
  EXPECT_EQ(counters.live_blocks, 0) << "device memory left behind";
}

INSTANTIATE_TEST_SUITE_P(Networks, DevicePlacement,
                         ::testing::Values("every", "mnist", "mnist_bn", "cifar10"));

TEST(DevicePlacement, AHostOperandIsRefusedNamingTheOperation) {
  auto backend = CreateFakeDeviceBackend();
  PS_ASSERT_OK(backend);
  Tensor y;
  Status s = (*backend)->Relu(Tensor({2, 3}), &y);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_NE(s.message().find("relu"), std::string::npos) << s.ToString();
}

TEST(DevicePlacement, ACopyOfADeviceTensorStaysOnItsDevice) {
  FakeDeviceCounters counters;
  auto backend = CreateFakeDeviceBackend(&counters);
  PS_ASSERT_OK(backend);
  Tensor d;
  PS_ASSERT_OK((*backend)->Upload(Tensor({3}, {1, 2, 3}), &d));
  Tensor copy = d;
  EXPECT_EQ(copy.device(), (*backend)->memory());
  EXPECT_NE(copy.data(), d.data());
  Tensor back;
  PS_ASSERT_OK((*backend)->Download(copy, &back));
  EXPECT_EQ(back.device(), nullptr);
  EXPECT_EQ(back[2], 3.0f);
  EXPECT_EQ(counters.live_blocks, 2);
}

}  // namespace
}  // namespace nn
}  // namespace pstrain
