// InitialValue: portable, deterministic variable initialization.
//
// std::normal_distribution differs across standard libraries, so the normal
// samples come from Box-Muller over std::mt19937_64, whose output is fixed by
// the standard.
#include <cmath>
#include <random>

#include "core/fnv1a.h"
#include "nn/model.h"

namespace pstrain {
namespace nn {
namespace {

// Spreads the bits of the seed so seeds 0, 1, 2... give unrelated streams.
uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Uniform in (0, 1]: never 0, so log() below is finite.
double UniformOpenClosed(std::mt19937_64& rng) {
  return static_cast<double>((rng() >> 11) + 1) * 0x1.0p-53;
}

// Fills t with a normal(0, stddev) truncated at 2 stddev: samples beyond are
// drawn again, as TensorFlow's truncated_normal does.
void FillTruncatedNormal(std::mt19937_64& rng, float stddev, Tensor* t) {
  const double kTwoPi = 6.283185307179586476925286766559;
  int64_t i = 0;
  while (i < t->size()) {
    double r = std::sqrt(-2.0 * std::log(UniformOpenClosed(rng)));
    double theta = kTwoPi * UniformOpenClosed(rng);
    for (double z : {r * std::cos(theta), r * std::sin(theta)}) {
      if (std::fabs(z) <= 2.0 && i < t->size()) (*t)[i++] = static_cast<float>(z * stddev);
    }
  }
}

}  // namespace

Tensor InitialValue(const VariableSpec& spec, uint64_t seed) {
  Tensor t(spec.shape);
  switch (spec.init.kind) {
    case InitKind::kConstant:
      t.Fill(spec.init.value);
      break;
    case InitKind::kTruncatedNormal: {
      std::mt19937_64 rng(Fnv1a64(spec.name) ^ SplitMix64(seed));
      FillTruncatedNormal(rng, spec.init.value, &t);
      break;
    }
  }
  return t;
}

}  // namespace nn
}  // namespace pstrain
