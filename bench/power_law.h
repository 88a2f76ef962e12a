// PowerLawRanks: ranks in [0, n) with P(rank r) roughly proportional to
// (r + 1)^-s, the continuous power law on [1, n + 1) drawn by inversion and
// floored: the ids of embedding traffic, a few hot and a long tail
// (sparse_scale, scale_bench --rows). s > 0 and s != 1.
//
// Thread-compatible.
#ifndef PSTRAIN_BENCH_POWER_LAW_H_
#define PSTRAIN_BENCH_POWER_LAW_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>

namespace pstrain {
namespace bench {

class PowerLawRanks {
 public:
  PowerLawRanks(int64_t n, double s, uint64_t seed)
      : n_(n), one_minus_s_(1.0 - s), span_(std::pow(n + 1.0, 1.0 - s) - 1.0), rng_(seed) {}
  int64_t Next() {
    const double u = uniform_(rng_);
    const double x = std::pow(1.0 + u * span_, 1.0 / one_minus_s_);
    return std::clamp<int64_t>(static_cast<int64_t>(x) - 1, 0, n_ - 1);
  }

 private:
  const int64_t n_;
  const double one_minus_s_, span_;
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> uniform_{0.0, 1.0};
};

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_POWER_LAW_H_
