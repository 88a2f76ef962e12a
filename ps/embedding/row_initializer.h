// The initial value of an embedding row: a function of the table's seed and
// name, the key and the row's length alone, so that every ps (and a worker
// that looks up a key no ps holds yet) makes the same row, whenever it
// makes it. TF's embedding_column default: a truncated normal of mean 0
// and stddev 1/sqrt(dim), each value redrawn until within 2 stddev; or a
// uniform in [-limit, limit], as fastText starts its input matrix (limit
// 1/dim), which costs no log or cosine a value.
//
// The draws come from a counter-based stream (SplitMix64 over a start that
// mixes seed, name and key), not from a generator with state.
#ifndef PSTRAIN_PS_EMBEDDING_ROW_INITIALIZER_H_
#define PSTRAIN_PS_EMBEDDING_ROW_INITIALIZER_H_

#include <cstdint>
#include <string_view>

#include "proto/ps.pb.h"

namespace pstrain {

class RowInitializer {
 public:
  // stddev 0: rows start at zero (a linear model's weights, as TF's
  // linear columns start them).
  RowInitializer(std::string_view table, uint64_t seed, int dim, float stddev);
  static RowInitializer Uniform(std::string_view table, uint64_t seed, int dim, float limit);
  // The table's (checked by EmbeddingTable::Create): uniform where
  // initializer_uniform is set, else the normal of initializer_stddev
  // (unset: DefaultEmbeddingStddev).
  static RowInitializer Of(const proto::EmbeddingTableConfig& config);

  // Writes the key's initial row, dim values, to `out`.
  void Fill(int64_t key, float* out) const;

  int dim() const { return dim_; }

 private:
  enum class Kind { kTruncatedNormal, kUniform };
  RowInitializer(Kind kind, std::string_view table, uint64_t seed, int dim, float scale);

  const Kind kind_;
  const uint64_t table_seed_;
  const int dim_;
  const float scale_;  // the normal's stddev, or the uniform's limit
};

// TF's default stddev for an embedding of `dim` values: 1/sqrt(dim).
float DefaultEmbeddingStddev(int dim);

}  // namespace pstrain

#endif  // PSTRAIN_PS_EMBEDDING_ROW_INITIALIZER_H_
