// The CUDA backend against the CPU backend, on a GPU: every kernel's
// forward and backward on the same inputs, whole networks' losses and
// gradients, towers on two GPUs against one tower on the CPU, and a short
// training run. Without a GPU it exits 77, which ctest reports as skipped.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "core/testing/status_assertions.h"
#include "nn/cpu/cpu_backend.h"
#include "nn/gpus.h"
#include "nn/graph_model.h"
#include "nn/model_spec.h"
#include "nn/towers.h"

namespace pstrain {
namespace nn {
namespace {

Tensor Random(const Shape& shape, uint32_t seed) {
  Tensor t(shape);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  for (int64_t i = 0; i < t.size(); ++i) t[i] = normal(rng);
  return t;
}

// max |a - b| / max(max |b|, 1e-3).
double RelativeError(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return 1e30;
  double diff = 0, scale = 1e-3;
  for (int64_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, static_cast<double>(std::fabs(a[i] - b[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(b[i])));
  }
  return diff / scale;
}

// The same loss and gradients from two models of one network.
void ExpectSameStep(Model* gpu, Model* cpu, uint64_t seed, int batch) {
  std::vector<Tensor> params;
  for (const VariableSpec& v : cpu->variables()) params.push_back(InitialValue(v, seed));
  Shape shape = cpu->example_shape();
  shape.insert(shape.begin(), batch);
  const Tensor images = Random(shape, static_cast<uint32_t>(seed));
  std::vector<int32_t> labels;
  for (int i = 0; i < batch; ++i) labels.push_back((i * 7) % cpu->num_classes());
  std::vector<Tensor> gg, cg;
  auto gl = gpu->LossAndGradients(params, images, labels, &gg);
  auto cl = cpu->LossAndGradients(params, images, labels, &cg);
  ASSERT_TRUE(gl.ok()) << gl.status().ToString();
  PS_ASSERT_OK(cl);
  EXPECT_NEAR(*gl, *cl, 1e-4 * std::fabs(*cl));
  for (size_t v = 0; v < cg.size(); ++v) {
    EXPECT_LE(RelativeError(gg[v], cg[v]), 1e-3) << cpu->variables()[v].name;
  }
}

class CudaBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto gpu = CreateGpuBackend(0);
    ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
    gpu_ = std::move(gpu).value();
    auto cpu = cpu::CreateCpuBackend();
    PS_ASSERT_OK(cpu);
    cpu_ = std::move(cpu).value();
  }
  Tensor Up(const Tensor& host) {
    Tensor d;
    PS_EXPECT_OK(gpu_->Upload(host, &d));
    return d;
  }
  Tensor Down(const Tensor& device) {
    Tensor h;
    PS_EXPECT_OK(gpu_->Download(device, &h));
    return h;
  }
  void ExpectClose(const Tensor& device, const Tensor& host, const std::string& what,
                   double tolerance = 1e-4) {
    EXPECT_LE(RelativeError(Down(device), host), tolerance) << what;
  }

  // An affine kernel's forward and backward on both backends.
  void CompareAffine(AffineKernel* g, AffineKernel* c, const Tensor& x, const Tensor& w,
                     const Tensor& b, const std::string& what) {
    Tensor gy, cy;
    ASSERT_TRUE(g->Forward(Up(x), Up(w), Up(b), &gy).ok()) << what;
    ASSERT_TRUE(c->Forward(x, w, b, &cy).ok()) << what;
    ExpectClose(gy, cy, what + " forward");
    const Tensor dy = Random(cy.shape(), 7);
    Tensor gdx, gdw, gdb, cdx, cdw, cdb;
    const Tensor dx_w = Up(w), dx_x = Up(x);
    ASSERT_TRUE(g->Backward(dx_x, dx_w, Up(dy), &gdx, &gdw, &gdb).ok()) << what;
    ASSERT_TRUE(c->Backward(x, w, dy, &cdx, &cdw, &cdb).ok()) << what;
    ExpectClose(gdx, cdx, what + " dx");
    ExpectClose(gdw, cdw, what + " dw");
    ExpectClose(gdb, cdb, what + " db");
  }

  void ComparePool(bool max, const PoolConfig& config, const Shape& x_shape) {
    const std::string what = std::string(max ? "max" : "avg") + " pool " + ShapeString(x_shape) +
                             " window " + std::to_string(config.window);
    auto g = max ? gpu_->MaxPool(config) : gpu_->AvgPool(config);
    auto c = max ? cpu_->MaxPool(config) : cpu_->AvgPool(config);
    ASSERT_TRUE(g.ok() && c.ok());
    const Tensor x = Random(x_shape, 3);
    Tensor gy, cy;
    ASSERT_TRUE((*g)->Forward(Up(x), &gy).ok()) << what;
    PS_ASSERT_OK((*c)->Forward(x, &cy));
    ExpectClose(gy, cy, what + " forward", 1e-6);
    const Tensor dy = Random(cy.shape(), 4);
    Tensor gdx, cdx;
    ASSERT_TRUE((*g)->Backward(x_shape, Up(dy), &gdx).ok()) << what;
    PS_ASSERT_OK((*c)->Backward(x_shape, dy, &cdx));
    ExpectClose(gdx, cdx, what + " backward", 1e-5);
  }

  std::unique_ptr<Backend> gpu_, cpu_;
};

TEST_F(CudaBackendTest, Conv2DEvenAndUnevenPaddingStrides) {
  const Conv2DConfig configs[] = {{5, 5, 3, 64, 1, Padding::kSame},  // cifar10's conv1
                                  {3, 3, 4, 8, 2, Padding::kSame},   // uneven SAME
                                  {4, 4, 2, 5, 1, Padding::kSame},   // even kernel: uneven
                                  {3, 3, 4, 6, 1, Padding::kValid}};
  for (const Conv2DConfig& config : configs) {
    auto g = gpu_->Conv2D(config);
    auto c = cpu_->Conv2D(config);
    ASSERT_TRUE(g.ok() && c.ok());
    const Tensor x = Random({4, 12, 11, config.in_channels}, 1);
    const Tensor w =
        Random({config.kernel_h, config.kernel_w, config.in_channels, config.out_channels}, 2);
    const Tensor b = Random({config.out_channels}, 3);
    CompareAffine(
        g->get(), c->get(), x, w, b,
        "conv " + std::to_string(config.kernel_h) + " stride " + std::to_string(config.stride));
  }
}

TEST_F(CudaBackendTest, Dense) {
  auto g = gpu_->Dense(2304, 384);
  auto c = cpu_->Dense(2304, 384);
  ASSERT_TRUE(g.ok() && c.ok());
  CompareAffine(g->get(), c->get(), Random({16, 6, 6, 64}, 1), Random({2304, 384}, 2),
                Random({384}, 3), "dense");
}

TEST_F(CudaBackendTest, PoolingEvenAndUnevenPadding) {
  for (bool max : {true, false}) {
    ComparePool(max, {3, 2, Padding::kSame}, {2, 24, 24, 8});  // cifar10: uneven
    ComparePool(max, {2, 2, Padding::kSame}, {2, 28, 28, 4});  // mnist: even
    ComparePool(max, {3, 1, Padding::kValid}, {2, 7, 9, 3});
  }
}

TEST_F(CudaBackendTest, Lrn) {
  const LrnConfig config{4, 1.0f, 0.001f / 9.0f, 0.75f};  // cifar10's
  auto g = gpu_->Lrn(config);
  auto c = cpu_->Lrn(config);
  ASSERT_TRUE(g.ok() && c.ok());
  const Tensor x = Random({2, 6, 6, 64}, 5);
  Tensor gy, cy;
  PS_ASSERT_OK((*g)->Forward(Up(x), &gy));
  PS_ASSERT_OK((*c)->Forward(x, &cy));
  ExpectClose(gy, cy, "lrn forward");
  const Tensor dy = Random(x.shape(), 6);
  Tensor gdx, cdx;
  PS_ASSERT_OK((*g)->Backward(Up(x), Up(dy), &gdx));
  PS_ASSERT_OK((*c)->Backward(x, dy, &cdx));
  ExpectClose(gdx, cdx, "lrn backward");
  EXPECT_EQ(gpu_->Lrn({9, 1.0f, 1.0f, 0.5f}).status().code(), Code::kInvalidArgument);
}

TEST_F(CudaBackendTest, BatchNorm) {
  const BatchNormConfig config{6, 1e-3f, 0.99f};
  auto g = gpu_->BatchNorm(config);
  auto c = cpu_->BatchNorm(config);
  ASSERT_TRUE(g.ok() && c.ok());
  const Tensor x = Random({4, 5, 5, 6}, 1), gamma = Random({6}, 2), beta = Random({6}, 3);
  Tensor mean = Random({6}, 4), var({6});
  var.Fill(1.5f);
  Tensor gy, cy;
  PS_ASSERT_OK((*g)->ForwardTraining(Up(x), Up(gamma), Up(beta), &gy));
  PS_ASSERT_OK((*c)->ForwardTraining(x, gamma, beta, &cy));
  ExpectClose(gy, cy, "batch norm training");
  const Tensor dy = Random(x.shape(), 5);
  Tensor gdx, gdg, gdb, cdx, cdg, cdb;
  PS_ASSERT_OK((*g)->Backward(Up(gamma), Up(dy), &gdx, &gdg, &gdb));
  PS_ASSERT_OK((*c)->Backward(gamma, dy, &cdx, &cdg, &cdb));
  ExpectClose(gdx, cdx, "batch norm dx");
  ExpectClose(gdg, cdg, "batch norm dgamma");
  ExpectClose(gdb, cdb, "batch norm dbeta");
  Tensor gmd, gvd, cmd, cvd;
  PS_ASSERT_OK((*g)->MovingAverageDeltas(Up(mean), Up(var), &gmd, &gvd));
  PS_ASSERT_OK((*c)->MovingAverageDeltas(mean, var, &cmd, &cvd));
  ExpectClose(gmd, cmd, "moving mean delta");
  ExpectClose(gvd, cvd, "moving variance delta");
  PS_ASSERT_OK((*g)->ForwardInference(Up(x), Up(gamma), Up(beta), Up(mean), Up(var), &gy));
  PS_ASSERT_OK((*c)->ForwardInference(x, gamma, beta, mean, var, &cy));
  ExpectClose(gy, cy, "batch norm inference");
}

TEST_F(CudaBackendTest, DropoutDrawsTheCpuMasks) {
  auto g = gpu_->Dropout(0.7f, 42);
  auto c = cpu_->Dropout(0.7f, 42);
  ASSERT_TRUE(g.ok() && c.ok());
  const Tensor x = Random({3, 100}, 1);
  for (int call = 0; call < 2; ++call) {
    Tensor gy, cy;
    PS_ASSERT_OK((*g)->Forward(Up(x), &gy));
    PS_ASSERT_OK((*c)->Forward(x, &cy));
    ExpectClose(gy, cy, "dropout forward", 0);
  }
}

TEST_F(CudaBackendTest, ReluLossAndWeightDecay) {
  const Tensor x = Random({8, 10}, 1);
  Tensor gy, cy;
  PS_ASSERT_OK(gpu_->Relu(Up(x), &gy));
  PS_ASSERT_OK(cpu_->Relu(x, &cy));
  ExpectClose(gy, cy, "relu", 0);
  const std::vector<int32_t> labels = {0, 1, 2, 3, 4, 5, 6, 9};
  Tensor gd, cd;
  auto gl = gpu_->SoftmaxCrossEntropy(Up(x), labels, &gd);
  auto cl = cpu_->SoftmaxCrossEntropy(x, labels, &cd);
  ASSERT_TRUE(gl.ok() && cl.ok());
  EXPECT_NEAR(*gl, *cl, 1e-6);
  ExpectClose(gd, cd, "dlogits", 1e-6);
  EXPECT_EQ(gpu_->SoftmaxCrossEntropy(Up(x), {0, 1, 2, 3, 4, 5, 6, 10}, &gd).status().code(),
            Code::kInvalidArgument);
  Tensor gdw = Up(cy), cdw = cy;
  auto gs = gpu_->AddWeightDecay(Up(x), 0.004f, &gdw);
  auto cs = cpu_->AddWeightDecay(x, 0.004f, &cdw);
  ASSERT_TRUE(gs.ok() && cs.ok());
  EXPECT_NEAR(*gs, *cs, 1e-9 + 1e-6 * std::fabs(*cs));
  ExpectClose(gdw, cdw, "weight decay", 1e-6);
}

TEST_F(CudaBackendTest, AHostOperandIsRefused) {
  Tensor y;
  EXPECT_EQ(gpu_->Relu(Tensor({2, 2}), &y).code(), Code::kFailedPrecondition);
}

// Loss and gradients of whole networks: the GPU model against the CPU one.
class CudaNetworkTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaNetworkTest, MatchesTheCpuModel) {
  auto spec = LoadModelSpec(GetParam());
  PS_ASSERT_OK(spec);
  auto backend = CreateGpuBackend(0);
  PS_ASSERT_OK(backend);
  auto gpu = GraphModel::Create(*spec, 1, std::move(backend).value());
  auto cpu = GraphModel::Create(*spec, 1);
  ASSERT_TRUE(gpu.ok() && cpu.ok()) << gpu.status().ToString();
  ExpectSameStep(gpu->get(), cpu->get(), 2, 16);
}

INSTANTIATE_TEST_SUITE_P(Networks, CudaNetworkTest,
                         ::testing::Values("mnist", "mnist_bn", "cifar10"));

TEST(CudaAllReduce, AveragesEachVariableAcrossTwoGpus) {
  if (ProbeGpus().devices.size() < 2) GTEST_SKIP() << "fewer than 2 GPUs";
  auto reduce = CreateGpuAllReduce(2);
  ASSERT_TRUE(reduce.ok()) << reduce.status().ToString();
  std::vector<std::unique_ptr<Backend>> gpus;
  std::vector<std::vector<Tensor>> tensors(2);
  const Shape shapes[] = {{5, 5, 3, 64}, {64}, {1}};
  for (int d = 0; d < 2; ++d) {
    auto b = CreateGpuBackend(d);
    PS_ASSERT_OK(b);
    gpus.push_back(std::move(b).value());
    for (size_t v = 0; v < 3; ++v) {
      Tensor device;
      PS_ASSERT_OK(gpus[d]->Upload(Random(shapes[v], 10 * d + v), &device));
      tensors[d].push_back(std::move(device));
    }
    PS_ASSERT_OK(gpus[d]->Finish());
  }
  PS_ASSERT_OK((*reduce)->Average({&tensors[0], &tensors[1]}));
  for (int d = 0; d < 2; ++d) {
    for (size_t v = 0; v < 3; ++v) {
      Tensor mean = Random(shapes[v], v), other = Random(shapes[v], 10 + v);
      for (int64_t i = 0; i < mean.size(); ++i) mean[i] = (mean[i] + other[i]) / 2;
      Tensor got;
      PS_ASSERT_OK(gpus[d]->Download(tensors[d][v], &got));
      EXPECT_LE(RelativeError(got, mean), 1e-6) << "cuda:" << d << " variable " << v;
    }
  }
}

TEST(CudaTowers, TwoGpusMatchOneCpuTowerOfTheWholeBatch) {
  if (ProbeGpus().devices.size() < 2) GTEST_SKIP() << "fewer than 2 GPUs";
  auto spec = LoadModelSpec("cifar10");
  PS_ASSERT_OK(spec);
  auto gpus = Towers::Create(*spec, 2, TowerDevices::kGpus);
  auto cpu = Towers::Create(*spec, 1);
  ASSERT_TRUE(gpus.ok()) << gpus.status().ToString();
  PS_ASSERT_OK(cpu);
  ExpectSameStep(gpus->get(), cpu->get(), 4, 16);
}

// The losses of 30 plain SGD steps (lr 0.05) of mnist memorizing 32 random
// images, on `backend`.
std::vector<float> MemorizingLosses(std::unique_ptr<Backend> backend) {
  auto spec = LoadModelSpec("mnist");
  PS_EXPECT_OK(spec);
  auto model = GraphModel::Create(*spec, 1, std::move(backend));
  PS_EXPECT_OK(model);
  if (!model.ok()) return {};
  std::vector<Tensor> params;
  for (const VariableSpec& v : (*model)->variables()) params.push_back(InitialValue(v, 1));
  const Tensor images = Random({32, 28, 28, 1}, 2);
  std::vector<int32_t> labels;
  for (int i = 0; i < 32; ++i) labels.push_back(i % 10);
  std::vector<float> losses;
  for (int step = 0; step < 30; ++step) {
    std::vector<Tensor> grads;
    auto loss = (*model)->LossAndGradients(params, images, labels, &grads);
    EXPECT_TRUE(loss.ok()) << loss.status().ToString();
    if (!loss.ok()) return {};
    losses.push_back(*loss);
    for (size_t v = 0; v < params.size(); ++v) {
      for (int64_t i = 0; i < params[v].size(); ++i) params[v][i] -= 0.05f * grads[v][i];
    }
  }
  return losses;
}

// Training on the GPU follows the CPU's trajectory step by step, and learns:
// the loss falls at every step (on the CPU, from 2.3026 to 2.2915).
TEST(CudaTraining, ShortRunFollowsTheCpuTrajectory) {
  auto gpu_backend = CreateGpuBackend(0);
  ASSERT_TRUE(gpu_backend.ok()) << gpu_backend.status().ToString();
  auto cpu_backend = cpu::CreateCpuBackend();
  ASSERT_TRUE(cpu_backend.ok()) << cpu_backend.status().ToString();
  const std::vector<float> gpu = MemorizingLosses(std::move(gpu_backend).value());
  const std::vector<float> cpu = MemorizingLosses(std::move(cpu_backend).value());
  ASSERT_EQ(gpu.size(), 30u);
  ASSERT_EQ(cpu.size(), 30u);
  for (size_t step = 0; step < gpu.size(); ++step) {
    EXPECT_NEAR(gpu[step], cpu[step], 1e-5f * cpu[step]) << "step " << step;
    if (step > 0) {
      EXPECT_LT(gpu[step], gpu[step - 1]) << "step " << step;
    }
  }
}

}  // namespace
}  // namespace nn
}  // namespace pstrain

int main(int argc, char** argv) {
  const pstrain::nn::GpuProbe probe = pstrain::nn::ProbeGpus();
  if (probe.devices.empty()) {
    std::printf("SKIPPED: no GPU (%s)\n", probe.why_none.c_str());
    return 77;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
