// pstrain_model_info: what a network holds and costs, as TF-slim's
// model_analyzer prints it: every variable (name, shape, parameters, bytes,
// initializer), the totals, forward FLOPs per example, and where each shard
// would live over N ps tasks with the bytes per ps (optimizer slots
// included, as placement weighs them); for a model of ids, each embedding
// table and the bytes each ps is expected to hold of it (rows spread by a
// hash of the key, each row with its slots and at most 29.2 bytes of key,
// step and index beside them: ps/embedding/embedding_table.h).
//
//   pstrain_model_info --model=cifar10 --ps=2
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "cluster/placement.h"
#include "cluster/placement_flags.h"
#include "core/task_main.h"
#include "data/data_flags.h"
#include "nn/graph_model.h"
#include "nn/model.h"
#include "nn/model_flags.h"
#include "nn/model_spec.h"
#include "ps/embedding/embedding_table.h"
#include "ps/optimizer_flags.h"

DEFINE_string(model, "mnist",
              "A built-in network (mnist, mnist_bn, cifar10, mnist_ids, wide_deep, fasttext, "
              "movielens, resnet20, dcn, deepfm, dlrm), a ModelSpec text file, or "
              "keras:FILE.json (a Keras model's to_json())");
DEFINE_int32(ps, 1, "Place the variables over this many ps tasks");
DEFINE_bool(sync_replicas, false, "Use the recipe's sync learning rate (printed only)");

namespace pstrain {
namespace {

std::string InitializerText(const nn::Initializer& init) {
  char buf[64];
  if (init.kind == nn::InitKind::kTruncatedNormal) {
    std::snprintf(buf, sizeof(buf), "tn(%g)", init.value);
  } else if (init.kind == nn::InitKind::kVarianceScaling) {
    std::snprintf(buf, sizeof(buf), "vs(%g,%s,%s)", init.value,
                  proto::VarianceScalingSpec::Mode_Name(init.fan_mode).c_str(),
                  init.distribution == proto::VarianceScalingSpec::UNIFORM ? "u" : "tn");
  } else {
    std::snprintf(buf, sizeof(buf), "c(%g)", init.value);
  }
  return buf;
}

std::string Human(double bytes) {
  char buf[32];
  if (bytes >= 1 << 20) {
    std::snprintf(buf, sizeof(buf), "%.2f MiB", bytes / (1 << 20));
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f KiB", bytes / 1024);
  }
  return buf;
}

int Run() {
  auto loaded = nn::LoadModelFromFlags(FLAGS_model);
  if (!loaded.ok()) return ExitWith(loaded.status(), kExitBadInput);
  const proto::ModelSpec& spec = loaded->spec;
  // The optimizer the ps tasks run (an example-by-example model's: GradientDescent at 1).
  auto optimizer = PsOptimizerFromFlags(spec, FLAGS_sync_replicas);
  if (!optimizer.ok()) return ExitWith(optimizer.status(), kExitBadInput);
  auto slots = OptimizerSlotCount(*optimizer);
  if (!slots.ok()) return ExitWith(slots.status(), kExitBadInput);
  if (FLAGS_ps < 1) return ExitWith(InvalidArgument("--ps must be >= 1"), kExitBadInput);

  const nn::Model& m = *loaded->model;
  // A chain of layers has its FLOPs and layers to show.
  const auto* graph = dynamic_cast<const nn::GraphModel*>(&m);
  std::string input = ShapeString(m.example_shape());
  if (!m.lookups().empty()) {
    input = "ids (";
    for (const nn::EmbeddingLookup& lookup : m.lookups()) {
      input += (input.back() == '(' ? "" : ", ") + lookup.feature;
    }
    input += ")";
  }
  if (spec.input().has_csv()) {
    input = "CSV rows of " + std::to_string(spec.input().csv().column_size()) + " columns";
  }
  std::printf("model %s: input %s, %d classes, optimizer %s (%d slot%s per variable)\n\n",
              spec.name().c_str(), input.c_str(), m.num_classes(), optimizer->name().c_str(),
              *slots, *slots == 1 ? "" : "s");
  std::printf("%-40s %-16s %12s %12s %-12s %s\n", "variable", "shape", "parameters", "bytes",
              "initializer", "notes");
  int64_t params = 0, bytes = 0;
  std::vector<cluster::VariableInfo> infos;
  for (const nn::VariableSpec& v : m.variables()) {
    const int64_t n = NumElements(v.shape);
    params += n;
    bytes += n * 4;
    std::string notes;
    if (!v.trainable) notes = "not trained";
    if (v.weight_decay > 0) {
      char wd[48];
      std::snprintf(wd, sizeof(wd), "weight decay %g", v.weight_decay);
      notes = wd;
    }
    std::printf("%-40s %-16s %12lld %12lld %-12s %s\n", v.name.c_str(),
                ShapeString(v.shape).c_str(), static_cast<long long>(n),
                static_cast<long long>(n * 4), InitializerText(v.init).c_str(), notes.c_str());
    infos.push_back({v.name, v.shape, v.trainable ? *slots : 0});
  }
  std::printf("\ntotal: %zu variables, %lld parameters, %s\n", m.variables().size(),
              static_cast<long long>(params), Human(static_cast<double>(bytes)).c_str());
  if (graph != nullptr) {
    std::printf("forward: %.3f GFLOP per example (multiply-adds count 2)\n\n",
                graph->ForwardFlopsPerExample() / 1e9);
    // A graph's layers with what each reads: the network drawn as a list.
    std::printf("%-20s %-16s %-20s %12s  %s\n", "layer", "kind", "output per example", "MFLOP",
                graph->is_chain() ? "" : "reads");
    for (const auto& l : graph->layers()) {
      std::string reads;
      for (const std::string& in : l.inputs) reads += (reads.empty() ? "" : ", ") + in;
      std::printf("%-20s %-16s %-20s %12.3f  %s\n", l.name.c_str(), l.kind.c_str(),
                  ShapeString(l.output).c_str(), static_cast<double>(l.flops) / 1e6,
                  graph->is_chain() ? "" : reads.c_str());
    }
  }
  if (!spec.feature_column().empty()) {
    std::printf("\n%-44s %s\n", "feature column", "kind");
    for (const proto::FeatureColumn& c : spec.feature_column()) {
      const auto* oneof = c.GetDescriptor()->FindOneofByName("kind");
      const auto* field = c.GetReflection()->GetOneofFieldDescriptor(c, oneof);
      std::printf("%-44s %s\n", c.name().c_str(), field != nullptr ? field->name().c_str() : "?");
    }
  }

  auto strategy = cluster::ParsePlacementStrategy(FLAGS_placement);
  if (!strategy.ok()) return ExitWith(strategy.status(), kExitBadInput);
  auto placement = cluster::ComputePlacement(infos, FLAGS_ps, *strategy, FLAGS_min_slice_bytes);
  if (!placement.ok()) return ExitWith(placement.status(), kExitBadInput);
  std::printf("\nplacement over %d ps (%s, slices of at least %lld bytes; bytes include slots):\n",
              FLAGS_ps, FLAGS_placement.c_str(), static_cast<long long>(FLAGS_min_slice_bytes));
  for (const cluster::Shard& s : placement->shards) {
    std::printf("  ps:%d  %-44s %-16s %s\n", s.ps, s.name.c_str(), ShapeString(s.shape).c_str(),
                Human(static_cast<double>(s.bytes)).c_str());
  }
  for (int ps = 0; ps < FLAGS_ps; ++ps) {
    std::printf("ps:%d holds %s\n", ps,
                Human(static_cast<double>(placement->bytes_per_ps[ps])).c_str());
  }
  if (m.lookups().empty()) return 0;
  std::printf(
      "\nembedding tables over %d ps (rows spread by key; a row's bytes include its "
      "slots):\n",
      FLAGS_ps);
  int width = 5;  // the longest table name's
  for (const nn::EmbeddingLookup& lookup : m.lookups()) {
    width = std::max(width, static_cast<int>(lookup.table.name().size()));
  }
  std::printf("%-*s %6s %12s %-10s %14s %16s\n", width, "table", "dim", "vocabulary", "optimizer",
              "bytes per row", "bytes per ps");
  for (const nn::EmbeddingLookup& lookup : m.lookups()) {
    const proto::EmbeddingTableConfig& t = lookup.table;
    const proto::OptimizerConfig& table_optimizer =
        t.optimizer().name().empty() ? *optimizer : t.optimizer();
    auto table_slots = OptimizerSlotCount(table_optimizer);
    if (!table_slots.ok()) return ExitWith(table_slots.status().Annotate(t.name()), kExitBadInput);
    const int64_t stride = int64_t{t.dim()} * (1 + *table_slots);
    const double row_bytes = 4.0 * stride + EmbeddingTable::MaxBytesBeside(stride);
    const std::string per_ps =
        t.vocabulary_size() > 0
            ? Human(row_bytes * static_cast<double>(t.vocabulary_size()) / FLAGS_ps)
            : "grows with ids";
    std::printf("%-*s %6d %12s %-10s %14.1f %16s\n", width, t.name().c_str(), t.dim(),
                t.vocabulary_size() > 0 ? std::to_string(t.vocabulary_size()).c_str() : "any",
                table_optimizer.name().c_str(), row_bytes, per_ps.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace pstrain

int main(int argc, char** argv) {
  pstrain::InitToolMain(
      "prints a network's variables, totals, FLOPs and placement over ps tasks.\n"
      "  pstrain_model_info --model=cifar10 --ps=2",
      &argc, &argv);
  return pstrain::Run();
}
