#include "ps/embedding/row_initializer.h"

#include <cmath>

#include "core/fnv1a.h"
#include "core/splitmix64.h"

namespace pstrain {
namespace {

// A uniform in (0, 1) from the top 24 bits of a draw: never 0, so its log
// is finite.
float UniformDraw(uint64_t draw) {
  return (static_cast<float>(draw >> 40) + 0.5f) * (1.0f / 16777216.0f);
}

}  // namespace

RowInitializer::RowInitializer(Kind kind, std::string_view table, uint64_t seed, int dim,
                               float scale)
    : kind_(kind), table_seed_(SplitMix64(seed ^ Fnv1a64(table))), dim_(dim), scale_(scale) {}

RowInitializer::RowInitializer(std::string_view table, uint64_t seed, int dim, float stddev)
    : RowInitializer(Kind::kTruncatedNormal, table, seed, dim, stddev) {}

RowInitializer RowInitializer::Uniform(std::string_view table, uint64_t seed, int dim,
                                       float limit) {
  return RowInitializer(Kind::kUniform, table, seed, dim, limit);
}

RowInitializer RowInitializer::Of(const proto::EmbeddingTableConfig& config) {
  if (config.has_initializer_uniform()) {
    return Uniform(config.name(), config.seed(), config.dim(), config.initializer_uniform());
  }
  return RowInitializer(config.name(), config.seed(), config.dim(),
                        config.has_initializer_stddev() ? config.initializer_stddev()
                                                        : DefaultEmbeddingStddev(config.dim()));
}

void RowInitializer::Fill(int64_t key, float* out) const {
  if (scale_ == 0) {
    for (int i = 0; i < dim_; ++i) out[i] = 0;
    return;
  }
  uint64_t counter = SplitMix64(table_seed_ ^ SplitMix64(static_cast<uint64_t>(key)));
  if (kind_ == Kind::kUniform) {
    for (int i = 0; i < dim_; ++i) {
      out[i] = (2.0f * UniformDraw(SplitMix64(counter++)) - 1.0f) * scale_;
    }
    return;
  }
  // Box-Muller, one normal per pair of uniforms; a value past 2 stddev is
  // drawn again, as TF's truncated_normal does.
  for (int i = 0; i < dim_;) {
    const float u1 = UniformDraw(SplitMix64(counter++));
    const float u2 = UniformDraw(SplitMix64(counter++));
    const float z = std::sqrt(-2.0f * std::log(u1)) * std::cos(6.28318530718f * u2);
    if (std::fabs(z) > 2.0f) continue;
    out[i++] = z * scale_;
  }
}

float DefaultEmbeddingStddev(int dim) { return 1.0f / std::sqrt(static_cast<float>(dim)); }

}  // namespace pstrain
