// Placement: which ps task holds each variable, or each slice of a large one.
//
// TensorFlow's replica_device_setter, done right: every task computes the same
// placement from the model's variables and the number of ps tasks, so no one
// has to be asked, and the fingerprint lets tasks check that they agree.
//
// A variable whose bytes (float32, its optimizer slots included) exceed
// `min_slice_bytes` is split along axis 0 into
//   min(num_ps, shape[0], ceil(bytes / min_slice_bytes))
// parts, as even as possible (earlier parts get the extra rows); rank-0
// variables are never split. Shards then go to ps tasks:
//   kGreedy:     by bytes descending (ties by name), each to the ps with the
//                fewest bytes so far (ties: lowest index); TF's
//                GreedyLoadBalancingStrategy, and the default.
//   kRoundRobin: in input order to ps 0, 1, 2, ...
// Pure functions; a Placement is immutable after ComputePlacement, so it may be
// read from any thread.
#ifndef PSTRAIN_CLUSTER_PLACEMENT_H_
#define PSTRAIN_CLUSTER_PLACEMENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"

namespace pstrain {
namespace cluster {

struct VariableInfo {
  std::string name;
  Shape shape;
  // Optimizer accumulators of the same shape that live beside the variable.
  int num_slots = 0;
};

struct Shard {
  std::string name;      // the variable's name when unpartitioned, else "<name>/part_<k>"
  std::string variable;  // the variable it is a slice of
  int part = 0;
  int num_parts = 1;
  int64_t row_begin = 0, row_end = 0;  // axis-0 slice [row_begin, row_end); 0, 0 for rank 0
  Shape shape;
  int ps = 0;
  int64_t bytes = 0;  // 4 * numel * (1 + num_slots)
};

enum class PlacementStrategy { kGreedy, kRoundRobin };

// "greedy" or "round_robin"; anything else is InvalidArgument.
StatusOr<PlacementStrategy> ParsePlacementStrategy(const std::string& name);

// How a task places variables (--placement, --min_slice_bytes:
// cluster/placement_flags.h): every task of a job must use the same.
struct PlacementOptions {
  PlacementStrategy strategy = PlacementStrategy::kGreedy;
  int64_t min_slice_bytes = 256 << 10;
};

struct Placement {
  int num_ps = 0;
  // Per variable in input order, its parts in order.
  std::vector<Shard> shards;
  // 64-bit FNV-1a over a canonical text of num_ps and every shard's name,
  // shape, rows and ps: equal on every task that computed the same placement.
  uint64_t fingerprint = 0;
  std::vector<int64_t> bytes_per_ps;  // size num_ps

  // The shards of `variable` in part order; empty if there is no such variable.
  std::vector<const Shard*> ShardsOfVariable(const std::string& variable) const;
  // The shards placed on ps task `ps`, in shard order.
  std::vector<const Shard*> ShardsOnPs(int ps) const;
};

// InvalidArgument for num_ps < 1, min_slice_bytes < 1, an empty or duplicate
// variable name, a non-positive dimension or negative num_slots.
StatusOr<Placement> ComputePlacement(const std::vector<VariableInfo>& vars, int num_ps,
                                     PlacementStrategy strategy, int64_t min_slice_bytes);

}  // namespace cluster
}  // namespace pstrain

#endif  // PSTRAIN_CLUSTER_PLACEMENT_H_
