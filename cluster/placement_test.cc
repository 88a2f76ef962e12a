#include "cluster/placement.h"
#include "core/testing/status_assertions.h"

#include <gtest/gtest.h>

namespace pstrain {
namespace cluster {
namespace {

constexpr int64_t kSlice = 256 << 10;

// The TensorFlow tutorial's mnist network (deep_mnist / convolutional.py).
std::vector<VariableInfo> MnistVariables() {
  return {
      {"conv1/weights", {5, 5, 1, 32}},
      {"conv1/biases", {32}},
      {"conv2/weights", {5, 5, 32, 64}},
      {"conv2/biases", {64}},
      {"local3/weights", {3136, 1024}},
      {"local3/biases", {1024}},
      {"softmax/weights", {1024, 10}},
      {"softmax/biases", {10}},
      {"global_step", {}},
  };
}

TEST(ParsePlacementStrategy, KnownAndUnknownNames) {
  EXPECT_EQ(ParsePlacementStrategy("greedy").value(), PlacementStrategy::kGreedy);
  EXPECT_EQ(ParsePlacementStrategy("round_robin").value(), PlacementStrategy::kRoundRobin);
  StatusOr<PlacementStrategy> bad = ParsePlacementStrategy("random");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("\"random\""), std::string::npos);
}

TEST(ComputePlacement, PartitionsLargeVariablesAlongAxisZero) {
  StatusOr<Placement> p = ComputePlacement(MnistVariables(), 2, PlacementStrategy::kGreedy, kSlice);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  std::vector<const Shard*> local3 = p->ShardsOfVariable("local3/weights");
  ASSERT_EQ(local3.size(), 2u);
  EXPECT_EQ(local3[0]->name, "local3/weights/part_0");
  EXPECT_EQ(local3[1]->name, "local3/weights/part_1");
  EXPECT_EQ(local3[0]->row_begin, 0);
  EXPECT_EQ(local3[0]->row_end, 1568);
  EXPECT_EQ(local3[1]->row_begin, 1568);
  EXPECT_EQ(local3[1]->row_end, 3136);
  EXPECT_EQ(local3[0]->shape, (Shape{1568, 1024}));
  EXPECT_EQ(local3[0]->bytes, 4 * 1568 * 1024);
  EXPECT_EQ(local3[1]->num_parts, 2);
  EXPECT_NE(local3[0]->ps, local3[1]->ps);

  // conv2/weights is 204800 bytes: under the slice limit, so whole.
  std::vector<const Shard*> conv2 = p->ShardsOfVariable("conv2/weights");
  ASSERT_EQ(conv2.size(), 1u);
  EXPECT_EQ(conv2[0]->name, "conv2/weights");
  EXPECT_EQ(conv2[0]->num_parts, 1);
  EXPECT_EQ(conv2[0]->row_end, 5);
  EXPECT_TRUE(p->ShardsOfVariable("nope").empty());
}

struct PartitionCase {
  Shape shape;
  int num_slots;
  int num_ps;
  int64_t min_slice_bytes;
  std::vector<int64_t> rows;  // rows of each part
};

TEST(ComputePlacement, PartitionCountsAndRowRanges) {
  const PartitionCase cases[] = {
      {{3136, 1024}, 0, 2, kSlice, {1568, 1568}},
      {{3136, 1024}, 0, 100, kSlice, std::vector<int64_t>(49, 64)},  // ceil(bytes/slice) = 49
      {{10, 4}, 0, 4, 16, {3, 3, 2, 2}},                             // earlier parts get extra
      {{3, 1000}, 0, 8, 16, {1, 1, 1}},                              // at most shape[0] parts
      {{100}, 0, 8, 400, {100}},                                     // exactly the limit: whole
      {{100}, 0, 8, 399, {50, 50}},
      {{100}, 1, 8, 400, {50, 50}},  // a slot doubles the bytes
      {{100}, 3, 8, 400, {25, 25, 25, 25}},
      {{}, 5, 8, 1, {0}},  // scalars are never split
  };
  for (const PartitionCase& c : cases) {
    StatusOr<Placement> p = ComputePlacement({{"v", c.shape, c.num_slots}}, c.num_ps,
                                             PlacementStrategy::kGreedy, c.min_slice_bytes);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    const std::string label = ShapeString(c.shape) + " slots=" + std::to_string(c.num_slots);
    ASSERT_EQ(p->shards.size(), c.rows.size()) << label;
    int64_t row = 0;
    for (size_t k = 0; k < c.rows.size(); ++k) {
      const Shard& s = p->shards[k];
      EXPECT_EQ(s.part, static_cast<int>(k)) << label;
      EXPECT_EQ(s.row_begin, row) << label;
      EXPECT_EQ(s.row_end, row + c.rows[k]) << label;
      EXPECT_EQ(s.bytes, 4 * NumElements(s.shape) * (1 + c.num_slots)) << label;
      if (!c.shape.empty()) {
        EXPECT_EQ(s.shape[0], c.rows[k]) << label;
      }
      row += c.rows[k];
    }
    if (c.rows.size() == 1) {
      EXPECT_EQ(p->shards[0].name, "v") << label;
    }
  }
}

TEST(ComputePlacement, GreedyBalancesBytes) {
  // Sizes 10, 9, 8, 7, 6 floats over 2 ps: 10->0, 9->1, 8->1, 7->0, 6->0 (LPT).
  std::vector<VariableInfo> vars = {{"e", {6}}, {"a", {10}}, {"d", {7}}, {"b", {9}}, {"c", {8}}};
  StatusOr<Placement> p = ComputePlacement(vars, 2, PlacementStrategy::kGreedy, kSlice);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  std::vector<int> ps;
  for (const Shard& s : p->shards) ps.push_back(s.ps);
  EXPECT_EQ(ps, (std::vector<int>{0, 0, 0, 1, 1}));  // input order e, a, d, b, c
  EXPECT_EQ(p->bytes_per_ps, (std::vector<int64_t>{4 * 23, 4 * 17}));
  ASSERT_EQ(p->ShardsOnPs(1).size(), 2u);
  EXPECT_EQ(p->ShardsOnPs(1)[0]->name, "b");
  EXPECT_EQ(p->ShardsOnPs(1)[1]->name, "c");
}

TEST(ComputePlacement, GreedyBreaksTiesByNameThenLowestPs) {
  StatusOr<Placement> p =
      ComputePlacement({{"z", {4}}, {"y", {4}}, {"x", {4}}}, 3, PlacementStrategy::kGreedy, kSlice);
  PS_ASSERT_OK(p);
  EXPECT_EQ(p->shards[2].ps, 0);  // x first
  EXPECT_EQ(p->shards[1].ps, 1);
  EXPECT_EQ(p->shards[0].ps, 2);
}

TEST(ComputePlacement, GreedyBeatsRoundRobinOnMnist) {
  StatusOr<Placement> greedy =
      ComputePlacement(MnistVariables(), 2, PlacementStrategy::kGreedy, kSlice);
  StatusOr<Placement> rr =
      ComputePlacement(MnistVariables(), 2, PlacementStrategy::kRoundRobin, kSlice);
  ASSERT_TRUE(greedy.ok() && rr.ok());
  auto spread = [](const Placement& p) {
    return std::max(p.bytes_per_ps[0], p.bytes_per_ps[1]) -
           std::min(p.bytes_per_ps[0], p.bytes_per_ps[1]);
  };
  EXPECT_LT(spread(*greedy), spread(*rr));
  int64_t total = 0;
  for (const Shard& s : greedy->shards) total += s.bytes;
  EXPECT_EQ(greedy->bytes_per_ps[0] + greedy->bytes_per_ps[1], total);
}

TEST(ComputePlacement, RoundRobinFollowsInputOrder) {
  StatusOr<Placement> p =
      ComputePlacement(MnistVariables(), 3, PlacementStrategy::kRoundRobin, kSlice);
  PS_ASSERT_OK(p);
  // local3/weights splits into 3 parts; shard order: variables in input order.
  std::vector<std::string> names;
  for (const Shard& s : p->shards) names.push_back(s.name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "conv1/weights", "conv1/biases", "conv2/weights", "conv2/biases",
                       "local3/weights/part_0", "local3/weights/part_1", "local3/weights/part_2",
                       "local3/biases", "softmax/weights", "softmax/biases", "global_step"}));
  for (size_t i = 0; i < p->shards.size(); ++i) {
    EXPECT_EQ(p->shards[i].ps, static_cast<int>(i % 3)) << p->shards[i].name;
  }
  EXPECT_EQ(p->ShardsOnPs(2).size(), 3u);
}

TEST(ComputePlacement, FingerprintIsStableAndSensitive) {
  auto fingerprint = [](const std::vector<VariableInfo>& vars, int num_ps, PlacementStrategy s,
                        int64_t slice) {
    return ComputePlacement(vars, num_ps, s, slice)->fingerprint;
  };
  const auto greedy = PlacementStrategy::kGreedy;
  const uint64_t base = fingerprint(MnistVariables(), 2, greedy, kSlice);
  EXPECT_EQ(base, fingerprint(MnistVariables(), 2, greedy, kSlice));
  EXPECT_NE(base, 0u);
  EXPECT_NE(base, fingerprint(MnistVariables(), 3, greedy, kSlice));
  EXPECT_NE(base, fingerprint(MnistVariables(), 2, PlacementStrategy::kRoundRobin, kSlice));
  EXPECT_NE(base, fingerprint(MnistVariables(), 2, greedy, 64 << 20));
  std::vector<VariableInfo> renamed = MnistVariables();
  renamed[1].name = "conv1/bias";
  EXPECT_NE(base, fingerprint(renamed, 2, greedy, kSlice));
  std::vector<VariableInfo> reshaped = MnistVariables();
  reshaped[7].shape = {11};
  EXPECT_NE(base, fingerprint(reshaped, 2, greedy, kSlice));
  // One ps: everything on ps 0, whatever the strategy.
  EXPECT_EQ(fingerprint(MnistVariables(), 1, greedy, kSlice),
            fingerprint(MnistVariables(), 1, PlacementStrategy::kRoundRobin, kSlice));
}

struct BadPlacement {
  std::vector<VariableInfo> vars;
  int num_ps;
  int64_t min_slice_bytes;
  const char* message;
};

TEST(ComputePlacement, RejectsBadInput) {
  const BadPlacement cases[] = {
      {{{"a", {1}}}, 0, kSlice, "at least one ps task, got num_ps=0"},
      {{{"a", {1}}}, 1, 0, "min_slice_bytes must be positive"},
      {{{"a", {1}}, {"a", {2}}}, 1, kSlice, "duplicate variable name a"},
      {{{"", {1}}}, 1, kSlice, "empty name"},
      {{{"a", {3, 0}}}, 1, kSlice, "variable a has shape [3,0]; every dimension must be positive"},
      {{{"a", {-1}}}, 1, kSlice, "every dimension must be positive"},
      {{{"a", {1}, -1}}, 1, kSlice, "negative num_slots"},
  };
  for (const BadPlacement& c : cases) {
    StatusOr<Placement> p =
        ComputePlacement(c.vars, c.num_ps, PlacementStrategy::kGreedy, c.min_slice_bytes);
    ASSERT_FALSE(p.ok()) << c.message;
    EXPECT_EQ(p.status().code(), Code::kInvalidArgument);
    EXPECT_NE(p.status().message().find(c.message), std::string::npos) << p.status().message();
  }
}

}  // namespace
}  // namespace cluster
}  // namespace pstrain
