// optimizer_bench: the ps's update of one dense variable, in this process:
// each optimizer's Optimizer::Apply over --elements floats (by default
// mnist's local3, 3.2 M of its 3.3 M parameters) on one thread, beside a
// memcpy of the variable as the machine's floor. Prints one JSON line per
// optimizer: ms per update (median of --updates, after --warmup), ns per
// element and the GB/s of the arrays it reads and writes (variable,
// gradient, slots). Every update rule is element by element and streams
// its arrays once, so a vectorized one runs near the copy's bandwidth; a
// scalar one runs several times slower.
#include <gflags/gflags.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench/quantile.h"
#include "core/task_main.h"
#include "core/tensor.h"
#include "ps/optimizer.h"

DEFINE_int64(elements, 3211264, "Floats in the variable (mnist's local3: 3136 x 1024)");
DEFINE_int32(warmup, 5, "Untimed updates first");
DEFINE_int32(updates, 50, "Timed updates per optimizer");

namespace pstrain {
namespace {

struct Case {
  std::string label;
  proto::OptimizerConfig config;
};

std::vector<Case> Cases() {
  auto config = [](const std::string& name) {
    proto::OptimizerConfig c;
    c.set_name(name);
    c.set_learning_rate(0.01f);
    return c;
  };
  std::vector<Case> cases;
  cases.push_back({"GradientDescent", config("GradientDescent")});
  proto::OptimizerConfig momentum = config("Momentum");
  momentum.set_momentum(0.9f);
  cases.push_back({"Momentum", momentum});
  momentum.set_use_nesterov(true);
  cases.push_back({"Momentum (Nesterov)", momentum});
  cases.push_back({"Adagrad", config("Adagrad")});
  cases.push_back({"Adadelta", config("Adadelta")});
  cases.push_back({"Adam", config("Adam")});
  cases.push_back({"RMSProp", config("RMSProp")});
  proto::OptimizerConfig centered = config("RMSProp");
  centered.set_centered(true);
  cases.push_back({"RMSProp (centered)", centered});
  cases.push_back({"Ftrl", config("Ftrl")});
  return cases;
}

// The median seconds of fn over the timed updates.
template <typename Fn>
double TimeUpdates(Fn fn) {
  for (int i = 0; i < FLAGS_warmup; ++i) fn(i + 1);
  std::vector<double> secs;
  for (int i = 0; i < FLAGS_updates; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    fn(FLAGS_warmup + i + 1);
    secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return bench::Quantile(&secs, 0.5);
}

void Print(const std::string& label, double secs, int arrays) {
  const double n = static_cast<double>(FLAGS_elements);
  std::printf(
      "{\"bench\":\"optimizer\",\"optimizer\":\"%s\",\"elements\":%lld,\"ms\":%.3f,"
      "\"ns_per_element\":%.3f,\"gb_per_s\":%.1f}\n",
      label.c_str(), static_cast<long long>(FLAGS_elements), 1e3 * secs, 1e9 * secs / n,
      arrays * 4 * n / secs / 1e9);
}

int Run() {
  if (FLAGS_elements < 1 || FLAGS_updates < 1 || FLAGS_warmup < 0) {
    std::fprintf(stderr, "--elements and --updates must be >= 1, --warmup >= 0\n");
    return 2;
  }
  const Shape shape = {FLAGS_elements};
  Tensor grad(shape);
  // Small gradients of both signs, so that no rule overflows or turns
  // denormal over the updates.
  for (int64_t i = 0; i < grad.size(); ++i) grad[i] = 1e-3f * static_cast<float>(i % 7 - 3);
  {
    Tensor src(shape), dest(shape);
    const double secs = TimeUpdates(
        [&](int) { std::memcpy(dest.data(), src.data(), sizeof(float) * FLAGS_elements); });
    Print("memcpy (the floor)", secs, 2);
  }
  for (const Case& c : Cases()) {
    auto created = Optimizer::Create(c.config);
    if (!created.ok()) {
      std::fprintf(stderr, "%s: %s\n", c.label.c_str(), created.status().ToString().c_str());
      return 1;
    }
    const Optimizer& optimizer = **created;
    Tensor var(shape);
    std::vector<Tensor> slots;
    std::vector<float*> slot_data;
    for (size_t k = 0; k < optimizer.slot_names().size(); ++k) {
      slots.emplace_back(shape);
      std::fill_n(slots.back().data(), FLAGS_elements,
                  optimizer.slot_initial_value(static_cast<int>(k)));
    }
    for (Tensor& s : slots) slot_data.push_back(s.data());
    const double secs = TimeUpdates([&](int count) {
      optimizer.Apply(var.data(), slot_data, grad.data(), FLAGS_elements, 0.01f, count);
    });
    // Read: variable, gradient, slots; written: variable, slots.
    Print(c.label, secs, 3 + 2 * static_cast<int>(slots.size()));
  }
  return 0;
}

}  // namespace
}  // namespace pstrain

int main(int argc, char** argv) {
  pstrain::InitToolMain(
      "optimizer_bench [flags]: the ps's update of one dense variable, per optimizer", &argc,
      &argv);
  return pstrain::Run();
}
