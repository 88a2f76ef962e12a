// InitialValue: portable, deterministic variable initialization.
//
// std::normal_distribution differs across standard libraries, so the normal
// samples come from Box-Muller over std::mt19937_64, whose output is fixed by
// the standard.
#include <algorithm>
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

// The variance-scaling denominator of a variable of `shape`: its fan_in,
// fan_out or their mean. The leading dimensions of a kernel of rank > 2 are
// its receptive field (HWIO); a vector's fans are its size.
double Fan(const Shape& shape, proto::VarianceScalingSpec::Mode mode) {
  double in = 1, out = 1;
  if (shape.size() == 1) {
    in = out = static_cast<double>(shape[0]);
  } else if (shape.size() >= 2) {
    double receptive = 1;
    for (size_t i = 0; i + 2 < shape.size(); ++i) receptive *= static_cast<double>(shape[i]);
    in = receptive * static_cast<double>(shape[shape.size() - 2]);
    out = receptive * static_cast<double>(shape.back());
  }
  switch (mode) {
    case proto::VarianceScalingSpec::FAN_OUT:
      return out;
    case proto::VarianceScalingSpec::FAN_AVG:
      return (in + out) / 2;
    default:
      return in;
  }
}

void FillVarianceScaling(std::mt19937_64& rng, const Initializer& init, const Shape& shape,
                         Tensor* t) {
  const double variance = init.value / std::max(1.0, Fan(shape, init.fan_mode));
  if (init.distribution == proto::VarianceScalingSpec::UNIFORM) {
    const double limit = std::sqrt(3.0 * variance);
    for (int64_t i = 0; i < t->size(); ++i) {
      (*t)[i] = static_cast<float>((2.0 * UniformOpenClosed(rng) - 1.0) * limit);
    }
    return;
  }
  // A standard normal truncated at 2 has stddev 0.8796...: divided out, as
  // Keras does, so the values' variance is `variance`.
  const double kTruncatedStddev = 0.87962566103423978;
  FillTruncatedNormal(rng, static_cast<float>(std::sqrt(variance) / kTruncatedStddev), t);
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
    case InitKind::kVarianceScaling: {
      std::mt19937_64 rng(Fnv1a64(spec.name) ^ SplitMix64(seed));
      FillVarianceScaling(rng, spec.init, spec.shape, &t);
      break;
    }
  }
  return t;
}

}  // namespace nn
}  // namespace pstrain
