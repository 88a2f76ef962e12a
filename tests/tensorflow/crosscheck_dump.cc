// crosscheck_dump: writes what pstrain computes, as raw little-endian arrays
// and a manifest.json, for crosscheck.py to set beside TensorFlow's answers.
//
//   --what=model    a model's variables (its own initializers), a random
//                   batch, the logits, the loss with weight decay, and every
//                   gradient (files var_I.f32, grad_I.f32, images.f32,
//                   labels.i32, logits.f32)
//   --what=distort  random uint8 images, the draws of the training
//                   distortions, and the image after each stage (crop, flip,
//                   brightness, contrast, standardization), the fused path's
//                   output and the evaluation path's
//   --what=read     a split as pstrain's readers load it (pixels.u8,
//                   labels.i32), from any format LoadDataset takes
//   --what=sparse_optimizers
//                   an embedding table (ps/embedding/embedding_table.h)
//                   under each sparse optimizer: its rows and slots as
//                   written (WriteRows), a few pushes with repeated keys
//                   (summed by SumDuplicates, as the ps does, then Apply),
//                   and the rows with their slots after each push
//                   (ReadRows, in the manifest's key order) and as Lookup
//                   answers them
//   --what=embedding_bag
//                   EmbeddingBagForward and EmbeddingBagBackward
//                   (nn/sparse/embedding_bag.h) on a batch of ragged ids
//                   with repeats, weighted and not, under each combiner
//   --what=bundle   a TensorFlow checkpoint (chief/tf_bundle.h) pstrain
//                   writes: float tensors of random values (a scalar among
//                   them) and int64 ones, written to --out/model.ckpt-3 and
//                   each also as a raw array (manifest.json names them);
//                   with --bundle=PREFIX, the tensors of that checkpoint as
//                   pstrain reads them, as raw arrays and a manifest
//   --what=logits   a checkpoint's (--checkpoint, --use_moving_averages, or
//                   a TensorFlow one read as --warm_start_from reads it)
//                   logits on --data_dir's test set, and the images as the
//                   network takes them (images.f32, logits.f32, labels.i32)
//   --what=crash    a train dir per write point of a checkpoint save in
//                   TensorFlow's format (--out/point_N): model.ckpt-100
//                   (every value 1) saved whole, then model.ckpt-200
//                   (every value 2) saved by a process that dies at write
//                   point N (core/atomic_file.h); the last N is the first
//                   save that runs to the end
#include <gflags/gflags.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "chief/checkpoint_manager.h"
#include "chief/evaluation.h"
#include "chief/tf_bundle.h"
#include "chief/warm_start.h"
#include "core/atomic_file.h"
#include "core/task_main.h"
#include "data/dataset_loader.h"
#include "data/distortions.h"
#include "data/input_pipeline.h"
#include "nn/model.h"
#include "nn/model_spec.h"
#include "nn/sparse/embedding_bag.h"
#include "proto/ps.pb.h"
#include "ps/embedding/embedding_table.h"
#include "ps/embedding/sparse_rows.h"
#include "ps/memory_budget.h"

DEFINE_string(what, "model",
              "model, distort, read, sparse_optimizers, embedding_bag, bundle, crash or logits");
DEFINE_string(out, "", "Directory to write into (must exist)");
DEFINE_string(model, "cifar10",
              "--what=model: a built-in network, a ModelSpec file or keras:FILE.json");
DEFINE_int32(batch, 8, "--what=model: images in the batch; --what=distort: images");
DEFINE_uint64(seed, 1, "Seed of the variables, images, draws, rows and gradients");
DEFINE_string(data_dir, "", "--what=read: the data set's directory");
DEFINE_string(data_format, "auto", "--what=read: idx, cifar, tfrecord or auto");
DEFINE_string(split, "train", "--what=read: train or test");
DEFINE_string(bundle, "", "--what=bundle: read this checkpoint instead of writing one");
DEFINE_string(checkpoint, "", "--what=logits: the checkpoint's prefix");
DEFINE_bool(use_moving_averages, false, "--what=logits: the moving averages' logits");
DEFINE_string(warm_start_from, "",
              "--what=logits: take the variables from this TensorFlow checkpoint as "
              "--warm_start_from does (instead of --checkpoint)");

namespace pstrain {
namespace {

template <typename T>
Status WriteArray(const std::string& name, const T* data, size_t count) {
  const std::string path = FLAGS_out + "/" + name;
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(count * sizeof(T)));
  f.close();
  if (!f) return Internal("cannot write " + path);
  return OkStatus();
}

Status WriteText(const std::string& name, const std::string& text) {
  const std::string path = FLAGS_out + "/" + name;
  std::ofstream f(path);
  f << text;
  f.close();
  if (!f) return Internal("cannot write " + path);
  return OkStatus();
}

std::string JsonShape(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

// The manifest entry of one tensor written as the raw array `file`.
std::string BundleEntryJson(const std::string& name, const char* dtype, const Shape& shape,
                            const std::string& file) {
  return "{\"name\": \"" + name + "\", \"dtype\": \"" + dtype +
         "\", \"shape\": " + JsonShape(shape) + ", \"file\": \"" + file + "\"}";
}

Status WriteBundle() {
  std::mt19937_64 rng(FLAGS_seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  PS_ASSIGN_OR_RETURN(auto writer, TfBundleWriter::Create(FLAGS_out + "/model.ckpt-3"));
  std::vector<std::string> entries;
  const std::vector<std::pair<std::string, Shape>> floats = {
      {"conv1/weights", {3, 3, 2, 4}}, {"softmax_linear/biases", {10}}, {"a_scalar", {}}};
  for (size_t i = 0; i < floats.size(); ++i) {
    Tensor t(floats[i].second, Tensor::kUninitialized);
    for (int64_t j = 0; j < t.size(); ++j) t[j] = normal(rng);
    PS_RETURN_IF_ERROR(writer->AddFloat(floats[i].first, t));
    const std::string file = "float_" + std::to_string(i) + ".f32";
    PS_RETURN_IF_ERROR(WriteArray(file, t.data(), static_cast<size_t>(t.size())));
    entries.push_back(BundleEntryJson(floats[i].first, "float32", t.shape(), file));
  }
  const std::vector<int64_t> step = {123}, ids = {-5, 0, 1LL << 40, 7};
  PS_RETURN_IF_ERROR(writer->AddInt64("global_step", {}, step));
  PS_RETURN_IF_ERROR(writer->AddInt64("table/keys", {4}, ids));
  PS_RETURN_IF_ERROR(WriteArray("step.i64", step.data(), step.size()));
  PS_RETURN_IF_ERROR(WriteArray("ids.i64", ids.data(), ids.size()));
  entries.push_back(BundleEntryJson("global_step", "int64", {}, "step.i64"));
  entries.push_back(BundleEntryJson("table/keys", "int64", {4}, "ids.i64"));
  PS_RETURN_IF_ERROR(writer->Finish());
  std::string manifest = "{\"prefix\": \"model.ckpt-3\", \"tensors\": [";
  for (size_t i = 0; i < entries.size(); ++i) manifest += (i ? ", " : "") + entries[i];
  return WriteText("manifest.json", manifest + "]}\n");
}

Status DumpBundle() {
  PS_ASSIGN_OR_RETURN(auto bundle, ReadTfBundle(FLAGS_bundle));
  std::string manifest = "{\"tensors\": [";
  int i = 0;
  for (const auto& [name, t] : bundle) {
    const std::string file = "tensor_" + std::to_string(i) + ".raw";
    if (t.dtype == tensorflow::DT_FLOAT) {
      PS_RETURN_IF_ERROR(WriteArray(file, t.floats.data(), static_cast<size_t>(t.floats.size())));
    } else {
      PS_RETURN_IF_ERROR(WriteArray(file, t.int64s.data(), t.int64s.size()));
    }
    manifest +=
        (i++ ? ", " : "") +
        BundleEntryJson(name, t.dtype == tensorflow::DT_FLOAT ? "float32" : "int64", t.shape, file);
  }
  return WriteText("manifest.json", manifest + "]}\n");
}

Status CrashSaves() {
  std::map<std::string, Tensor> v1, v2;
  v1.emplace("w", Tensor({64}, std::vector<float>(64, 1.0f)));
  v1.emplace("w/Momentum", Tensor({64}, std::vector<float>(64, 1.0f)));
  v2.emplace("w", Tensor({64}, std::vector<float>(64, 2.0f)));
  v2.emplace("w/Momentum", Tensor({64}, std::vector<float>(64, 2.0f)));
  std::string points;
  for (int point = 1;; ++point) {
    const std::string dir = FLAGS_out + "/point_" + std::to_string(point);
    std::filesystem::create_directories(dir);
    {
      CheckpointManager m({dir, 5, 10000});
      m.SetFormat(CheckpointFormat::kTensorFlow, nullptr);
      PS_RETURN_IF_ERROR(m.Save(100, v1).status());
    }
    const pid_t pid = fork();
    if (pid < 0) return Internal("fork failed");
    if (pid == 0) {
      CheckpointManager m({dir, 5, 10000});
      m.SetFormat(CheckpointFormat::kTensorFlow, nullptr);
      CrashAtWritePointForTest(point);
      _exit(m.Save(200, v2).ok() ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status)) return Internal("the saving process did not exit");
    points += (point > 1 ? ", " : "") + std::to_string(point);
    if (WEXITSTATUS(status) == 0) break;  // past the last write point
    if (WEXITSTATUS(status) != kCrashExitCode) return Internal("the save failed otherwise");
  }
  return WriteText("manifest.json", "{\"points\": [" + points + "]}\n");
}

Status DumpModel() {
  PS_ASSIGN_OR_RETURN(std::unique_ptr<nn::Model> model, nn::CreateModel(FLAGS_model));
  std::vector<Tensor> params;
  for (const nn::VariableSpec& v : model->variables()) {
    params.push_back(nn::InitialValue(v, FLAGS_seed));
  }
  Shape shape = model->example_shape();
  shape.insert(shape.begin(), FLAGS_batch);
  Tensor images(shape, Tensor::kUninitialized);
  std::mt19937_64 rng(FLAGS_seed);
  std::normal_distribution<float> pixel(0.0f, 1.0f);  // standardized images
  for (int64_t i = 0; i < images.size(); ++i) images[i] = pixel(rng);
  std::vector<int32_t> labels(FLAGS_batch);
  for (int32_t& l : labels) l = static_cast<int32_t>(rng() % model->num_classes());

  std::vector<Tensor> grads;
  PS_ASSIGN_OR_RETURN(float loss, model->LossAndGradients(params, images, labels, &grads));
  PS_ASSIGN_OR_RETURN(Tensor logits, model->Logits(params, images));

  std::ostringstream m;
  char loss_text[32];
  std::snprintf(loss_text, sizeof(loss_text), "%.9g", loss);
  m << "{\"model\": \"" << FLAGS_model << "\", \"loss\": " << loss_text
    << ", \"images\": {\"file\": \"images.f32\", \"shape\": " << JsonShape(images.shape())
    << "}, \"labels\": \"labels.i32\", \"logits\": {\"file\": \"logits.f32\", \"shape\": "
    << JsonShape(logits.shape()) << "}, \"variables\": [";
  for (size_t i = 0; i < params.size(); ++i) {
    const nn::VariableSpec& v = model->variables()[i];
    const std::string value = "var_" + std::to_string(i) + ".f32";
    const std::string grad = "grad_" + std::to_string(i) + ".f32";
    PS_RETURN_IF_ERROR(WriteArray(value, params[i].data(), params[i].size()));
    PS_RETURN_IF_ERROR(WriteArray(grad, grads[i].data(), grads[i].size()));
    m << (i ? ", " : "") << "{\"name\": \"" << v.name << "\", \"shape\": " << JsonShape(v.shape)
      << ", \"value\": \"" << value << "\", \"grad\": \"" << grad
      << "\", \"weight_decay\": " << v.weight_decay << "}";
  }
  m << "]}\n";
  PS_RETURN_IF_ERROR(WriteArray("images.f32", images.data(), images.size()));
  PS_RETURN_IF_ERROR(WriteArray("labels.i32", labels.data(), labels.size()));
  PS_RETURN_IF_ERROR(WriteArray("logits.f32", logits.data(), logits.size()));
  return WriteText("manifest.json", m.str());
}

Status DumpDistortions() {
  data::ImageDataset ds;
  ds.count = FLAGS_batch;
  ds.rows = ds.cols = 32;
  ds.depth = 3;
  std::mt19937_64 rng(FLAGS_seed);
  ds.pixels.resize(ds.count * ds.image_size());
  for (uint8_t& p : ds.pixels) p = static_cast<uint8_t>(rng() % 256);
  ds.labels.assign(ds.count, 0);
  const data::DistortionParams params;
  PS_RETURN_IF_ERROR(data::CheckDistortionParams(params, ds.rows, ds.cols));

  const char* kStages[] = {"crop",         "flip",  "brightness", "contrast",
                           "standardized", "fused", "eval"};
  std::vector<std::vector<float>> stages(std::size(kStages));
  std::ostringstream m;
  m << "{\"count\": " << ds.count << ", \"height\": " << ds.rows << ", \"width\": " << ds.cols
    << ", \"depth\": " << ds.depth << ", \"crop\": [" << params.crop_height << ", "
    << params.crop_width << "], \"draws\": [";
  for (int64_t i = 0; i < ds.count; ++i) {
    const data::DistortionDraw d = data::DrawDistortion(params, ds.rows, ds.cols, &rng);
    char draw[160];
    std::snprintf(draw, sizeof(draw),
                  "{\"top\": %d, \"left\": %d, \"flip\": %s, \"brightness\": %.9g, "
                  "\"contrast\": %.9g}",
                  d.crop_top, d.crop_left, d.flip ? "true" : "false", d.brightness_delta,
                  d.contrast_factor);
    m << (i ? ", " : "") << draw;
    const data::FloatImage in = data::ToFloatImage(ds, i);
    data::FloatImage img =
        data::Crop(in, d.crop_top, d.crop_left, params.crop_height, params.crop_width);
    auto keep = [&](int stage, const data::FloatImage& x) {
      stages[stage].insert(stages[stage].end(), x.values.begin(), x.values.end());
    };
    keep(0, img);
    if (d.flip) data::FlipLeftRight(&img);
    keep(1, img);
    data::AdjustBrightness(d.brightness_delta, &img);
    keep(2, img);
    data::AdjustContrast(d.contrast_factor, &img);
    keep(3, img);
    data::PerImageStandardization(&img);
    keep(4, img);
    std::vector<float> fused(img.values.size());
    data::DistortForTrainingInto(ds, i, params, d, fused.data());
    stages[5].insert(stages[5].end(), fused.begin(), fused.end());
    keep(6, data::PrepareForEvaluation(in, params.crop_height, params.crop_width));
  }
  m << "], \"stages\": [";
  for (size_t s = 0; s < stages.size(); ++s) {
    const std::string file = std::string(kStages[s]) + ".f32";
    PS_RETURN_IF_ERROR(WriteArray(file, stages[s].data(), stages[s].size()));
    m << (s ? ", " : "") << "\"" << kStages[s] << "\"";
  }
  m << "]}\n";
  PS_RETURN_IF_ERROR(WriteArray("images.u8", ds.pixels.data(), ds.pixels.size()));
  return WriteText("manifest.json", m.str());
}

Status DumpDataset() {
  PS_ASSIGN_OR_RETURN(data::ImageDataset ds,
                      data::LoadDataset(FLAGS_data_dir, FLAGS_data_format, FLAGS_split));
  PS_RETURN_IF_ERROR(WriteArray("pixels.u8", ds.pixels.data(), ds.pixels.size()));
  PS_RETURN_IF_ERROR(WriteArray("labels.i32", ds.labels.data(), ds.labels.size()));
  std::ostringstream m;
  m << "{\"count\": " << ds.count << ", \"height\": " << ds.rows << ", \"width\": " << ds.cols
    << ", \"depth\": " << ds.depth << "}\n";
  return WriteText("manifest.json", m.str());
}

// --what=logits -------------------------------------------------------------

Status DumpLogits() {
  PS_ASSIGN_OR_RETURN(proto::ModelSpec spec, nn::LoadModelSpec(FLAGS_model));
  PS_ASSIGN_OR_RETURN(std::unique_ptr<nn::Model> model, nn::CreateModel(spec));
  bool averaged = false;
  std::vector<Tensor> params;
  if (!FLAGS_warm_start_from.empty()) {
    WarmStartOptions options;
    options.prefix = FLAGS_warm_start_from;
    PS_ASSIGN_OR_RETURN(auto values, WarmStartValues(model->variables(), options));
    for (const nn::VariableSpec& v : model->variables()) params.push_back(values.at(v.name));
  } else {
    PS_ASSIGN_OR_RETURN(Checkpoint ckpt, ReadCheckpoint(FLAGS_checkpoint));
    PS_ASSIGN_OR_RETURN(params, SelectEvalParams(*model, ckpt.tensors, FLAGS_use_moving_averages,
                                                 FLAGS_checkpoint, &averaged));
  }
  PS_ASSIGN_OR_RETURN(data::ImageDataset ds,
                      data::LoadDataset(FLAGS_data_dir, FLAGS_data_format, "test"));
  const ImageInput input = ImageInputOf(spec);
  std::vector<float> images, logits;
  Shape example;
  for (int64_t begin = 0; begin < ds.count; begin += 1000) {
    const int64_t n = std::min<int64_t>(1000, ds.count - begin);
    Tensor x;
    PS_RETURN_IF_ERROR(
        data::PrepareEvalImages(ds, begin, n, input.preprocessing, input.height, input.width, &x));
    PS_ASSIGN_OR_RETURN(Tensor y, model->Logits(params, x));
    example.assign(x.shape().begin() + 1, x.shape().end());
    images.insert(images.end(), x.data(), x.data() + x.size());
    logits.insert(logits.end(), y.data(), y.data() + y.size());
  }
  PS_RETURN_IF_ERROR(WriteArray("images.f32", images.data(), images.size()));
  PS_RETURN_IF_ERROR(WriteArray("logits.f32", logits.data(), logits.size()));
  PS_RETURN_IF_ERROR(WriteArray("labels.i32", ds.labels.data(), ds.labels.size()));
  std::ostringstream m;
  m << "{\"count\": " << ds.count << ", \"example\": " << JsonShape(example)
    << ", \"classes\": " << model->num_classes()
    << ", \"moving_averages\": " << (averaged ? "true" : "false") << "}\n";
  return WriteText("manifest.json", m.str());
}

// --what=sparse_optimizers -------------------------------------------------

// One table's optimizer, as the manifest names it for crosscheck.py.
struct SparseCase {
  std::string label;  // the check's name
  proto::OptimizerConfig config;
};

std::vector<SparseCase> SparseCases() {
  std::vector<SparseCase> cases;
  auto add = [&](const std::string& label, const std::string& name, float lr) {
    SparseCase c;
    c.label = label;
    c.config.set_name(name);
    c.config.set_learning_rate(lr);
    cases.push_back(c);
    return &cases.back().config;
  };
  add("GradientDescent", "GradientDescent", 0.1f);
  add("Momentum", "Momentum", 0.05f)->set_momentum(0.9f);
  proto::OptimizerConfig* c = add("Momentum (Nesterov)", "Momentum", 0.05f);
  c->set_momentum(0.9f);
  c->set_use_nesterov(true);
  add("Adagrad", "Adagrad", 0.1f)->set_initial_accumulator_value(0.1f);
  c = add("Ftrl (V2: l1, l2, l2_shrinkage, learning_rate_power -0.7)", "Ftrl", 0.05f);
  c->set_initial_accumulator_value(0.1f);
  c->set_learning_rate_power(-0.7f);
  c->set_l1_regularization_strength(0.01f);
  c->set_l2_regularization_strength(0.02f);
  c->set_l2_shrinkage_regularization_strength(0.03f);
  c = add("Ftrl (l1, l2, learning_rate_power -0.5)", "Ftrl", 0.05f);
  c->set_initial_accumulator_value(0.1f);
  c->set_l1_regularization_strength(0.01f);
  c->set_l2_regularization_strength(0.02f);
  for (const char* name : {"Adam", "LazyAdam"}) {
    c = add(name, name, 0.01f);
    c->set_beta1(0.9f);
    c->set_beta2(0.999f);
    c->set_epsilon(1e-8f);
  }
  return cases;
}

// The config's hyper-parameters as JSON: those it leaves unset as the
// defaults Optimizer::Create takes for them.
std::string JsonOptimizer(const proto::OptimizerConfig& c) {
  char text[512];
  std::snprintf(text, sizeof(text),
                "{\"name\": \"%s\", \"learning_rate\": %.9g, \"momentum\": %.9g, "
                "\"use_nesterov\": %s, \"beta1\": %.9g, \"beta2\": %.9g, \"epsilon\": %.9g, "
                "\"initial_accumulator_value\": %.9g, \"learning_rate_power\": %.9g, "
                "\"l1\": %.9g, \"l2\": %.9g, \"l2_shrinkage\": %.9g}",
                c.name().c_str(), c.learning_rate(), c.momentum(),
                c.use_nesterov() ? "true" : "false", c.has_beta1() ? c.beta1() : 0.9f,
                c.has_beta2() ? c.beta2() : 0.999f, c.has_epsilon() ? c.epsilon() : 1e-8f,
                c.has_initial_accumulator_value() ? c.initial_accumulator_value() : 0.1f,
                c.has_learning_rate_power() ? c.learning_rate_power() : -0.5f,
                c.l1_regularization_strength(), c.l2_regularization_strength(),
                c.l2_shrinkage_regularization_strength());
  return text;
}

template <typename T>
std::string JsonList(const std::vector<T>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

Status DumpSparseOptimizers() {
  constexpr int kDim = 5;
  // Keys far apart (an int64 key space, not row numbers). Every one but the
  // last is written before the first push; the last ("fresh") is not: its
  // row is made by its first gradient, from the RowInitializer and the
  // optimizer's initial slots. keys[kNeverPushed] never has a gradient.
  const std::vector<int64_t> keys = {7,  1000003, -42, 123456789012, 5,  99,  31337,
                                     64, 777,     -9,  4096,         18, 2025};
  const int64_t n = static_cast<int64_t>(keys.size());
  const int64_t written = n - 1;
  constexpr int kNeverPushed = 11;
  // The pushes, by index into keys: repeats within a push, keys 9 and 10
  // first pushed at step 2, the fresh key at steps 2 and 3, key 2 in
  // every push.
  const std::vector<std::vector<int>> pushes = {
      {0, 1, 2, 0, 3, 4, 2, 0, 5},
      {9, 2, 12, 10, 6, 9, 12, 7, 1},
      {2, 8, 4, 12, 8, 10, 8, 3, 2, 0},
  };

  std::mt19937_64 rng(FLAGS_seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> uniform(0.05f, 1.0f);
  // The same rows and gradients for every optimizer.
  std::vector<float> rows(written * kDim);
  for (float& x : rows) x = normal(rng);
  std::vector<std::vector<float>> grads;
  for (const std::vector<int>& push : pushes) {
    std::vector<float> g(push.size() * kDim);
    for (float& x : g) x = normal(rng);
    grads.push_back(g);
  }

  std::ostringstream m;
  m << "{\"dim\": " << kDim << ", \"keys\": " << JsonList(keys) << ", \"written\": " << written
    << ", \"never_pushed\": " << kNeverPushed << ", \"pushes\": [";
  for (size_t p = 0; p < pushes.size(); ++p) {
    const std::string kf = "push_" + std::to_string(p) + "_keys.i64";
    const std::string gf = "push_" + std::to_string(p) + "_grad.f32";
    std::vector<int64_t> push_keys;
    for (int i : pushes[p]) push_keys.push_back(keys[i]);
    PS_RETURN_IF_ERROR(WriteArray(kf, push_keys.data(), push_keys.size()));
    PS_RETURN_IF_ERROR(WriteArray(gf, grads[p].data(), grads[p].size()));
    m << (p ? ", " : "") << "{\"keys\": \"" << kf << "\", \"grad\": \"" << gf
      << "\", \"count\": " << push_keys.size() << "}";
  }
  m << "], \"cases\": [";

  const std::vector<SparseCase> cases = SparseCases();
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const SparseCase& sc = cases[ci];
    proto::EmbeddingTableConfig config;
    config.set_name("crosscheck/embedding_weights");
    config.set_dim(kDim);
    config.set_seed(FLAGS_seed);
    config.set_num_shards(1);
    config.set_shard(0);
    MemoryBudget budget(uint64_t{1} << 32);
    PS_ASSIGN_OR_RETURN(std::unique_ptr<EmbeddingTable> table,
                        EmbeddingTable::Create(config, sc.config, "ps:0", &budget));
    const std::vector<std::string>& slots = table->slot_names();
    const int64_t stride = table->row_floats();
    if (stride != kDim * static_cast<int64_t>(1 + slots.size())) {
      return Internal("row_floats " + std::to_string(stride) + " for " +
                      std::to_string(slots.size()) + " slots of dim " + std::to_string(kDim));
    }
    // The written rows: the values above, and slots drawn here (positive
    // for the accumulators of squares, which must be).
    EmbeddingTable::RowBlock block;
    block.keys.assign(keys.begin(), keys.begin() + written);
    for (int64_t r = 0; r < written; ++r) {
      block.values.insert(block.values.end(), rows.begin() + r * kDim,
                          rows.begin() + (r + 1) * kDim);
      for (const std::string& slot : slots) {
        const bool positive = slot == "accumulator" || slot == "v";
        for (int d = 0; d < kDim; ++d) {
          block.values.push_back(positive ? (slot == "v" ? 0.01f * uniform(rng) : uniform(rng))
                                          : (slot == "m" ? 0.1f : 1.0f) * normal(rng));
        }
      }
    }
    PS_RETURN_IF_ERROR(table->WriteRows(block, 0));

    // The table as read: [n, 1 + slots, dim] in keys' order; the fresh
    // key's row, before it has one, as Lookup answers it and its slots
    // as zeros (crosscheck.py takes TF's initial slots for it).
    auto read_table = [&](std::vector<float>* out) -> Status {
      out->assign(n * stride, 0.0f);
      std::map<int64_t, int64_t> place;
      for (int64_t i = 0; i < n; ++i) place[keys[i]] = i;
      EmbeddingTable::RowBlock all;
      for (int64_t first = 0; first < table->row_end();) {
        first = table->ReadRows(first, 4, false, &all);
      }
      std::vector<bool> seen(n, false);
      for (size_t r = 0; r < all.keys.size(); ++r) {
        auto it = place.find(all.keys[r]);
        if (it == place.end()) return Internal("ReadRows gave an unknown key");
        if (seen[it->second]) return Internal("ReadRows gave a key twice");
        seen[it->second] = true;
        std::copy(all.values.begin() + r * stride, all.values.begin() + (r + 1) * stride,
                  out->begin() + it->second * stride);
      }
      for (int64_t i = 0; i < n; ++i) {
        if (!seen[i]) table->Lookup({keys[i]}, out->data() + i * stride);
      }
      return OkStatus();
    };
    const std::string prefix = "case_" + std::to_string(ci) + "_";
    std::vector<float> state;
    PS_RETURN_IF_ERROR(read_table(&state));
    PS_RETURN_IF_ERROR(WriteArray(prefix + "initial.f32", state.data(), state.size()));

    m << (ci ? ", " : "") << "{\"label\": \"" << sc.label
      << "\", \"optimizer\": " << JsonOptimizer(sc.config) << ", \"slots\": [";
    for (size_t s = 0; s < slots.size(); ++s) m << (s ? ", " : "") << "\"" << slots[s] << "\"";
    m << "], \"initial\": \"" << prefix << "initial.f32\", \"after\": [";
    for (size_t p = 0; p < pushes.size(); ++p) {
      std::vector<int64_t> push_keys;
      for (int i : pushes[p]) push_keys.push_back(keys[i]);
      PS_RETURN_IF_ERROR(table->CheckKeys(push_keys));
      const SparseRows gradient = SumDuplicates(
          push_keys.data(), static_cast<int64_t>(push_keys.size()), grads[p].data(), kDim);
      PS_RETURN_IF_ERROR(table->Apply(gradient, static_cast<int64_t>(p) + 1));
      PS_RETURN_IF_ERROR(read_table(&state));
      std::vector<float> looked_up(n * kDim);
      table->Lookup(keys, looked_up.data());
      const std::string sf = prefix + "after_" + std::to_string(p) + ".f32";
      const std::string lf = prefix + "lookup_" + std::to_string(p) + ".f32";
      PS_RETURN_IF_ERROR(WriteArray(sf, state.data(), state.size()));
      PS_RETURN_IF_ERROR(WriteArray(lf, looked_up.data(), looked_up.size()));
      // Which keys have a row (the others' slots above are zeros).
      std::vector<int> held(n, 0);
      EmbeddingTable::RowBlock all;
      table->ReadRows(0, table->row_end(), false, &all);
      for (int64_t i = 0; i < n; ++i) {
        held[i] = std::find(all.keys.begin(), all.keys.end(), keys[i]) != all.keys.end();
      }
      m << (p ? ", " : "") << "{\"rows\": \"" << sf << "\", \"lookup\": \"" << lf
        << "\", \"held\": " << JsonList(held) << "}";
    }
    m << "]}";
  }
  m << "]}\n";
  return WriteText("manifest.json", m.str());
}

// --what=embedding_bag -----------------------------------------------------

Status DumpEmbeddingBag() {
  constexpr int kDim = 6;
  constexpr int64_t kVocabulary = 20;
  // Repeats within an example (3, 3; 11 three times) and across examples
  // (3, 7, 11, 0); one example of a single id, one empty example between
  // others (TF's segment ops give it zeros, as pstrain does).
  const std::vector<std::vector<int64_t>> examples = {
      {3, 7, 3, 12}, {11}, {0, 11, 5, 11, 11}, {}, {7, 19, 3}, {2, 0, 16, 9, 4, 3}};
  std::mt19937_64 rng(FLAGS_seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> uniform(0.25f, 2.0f);
  RaggedIds unweighted, weighted;
  for (const std::vector<int64_t>& e : examples) {
    std::vector<float> w(e.size());
    for (float& x : w) x = uniform(rng);
    if (w.size() > 2) w[1] = -0.5f * w[1];  // a negative weight, the sums still > 0
    unweighted.Add(e);
    weighted.Add(e, w);
  }
  PS_RETURN_IF_ERROR(weighted.Check("weighted ids"));
  const UniqueKeys unique =
      Unique(weighted.values.data(), static_cast<int64_t>(weighted.values.size()));
  const int64_t num_unique = static_cast<int64_t>(unique.keys.size());
  // The whole table, and the unique ids' rows of it (what a worker pulls).
  std::vector<float> table(kVocabulary * kDim);
  for (float& x : table) x = normal(rng);
  Tensor rows({num_unique, kDim});
  for (int64_t u = 0; u < num_unique; ++u) {
    std::copy(table.begin() + unique.keys[u] * kDim, table.begin() + (unique.keys[u] + 1) * kDim,
              rows.data() + u * kDim);
  }
  Tensor dout({weighted.batch(), kDim});
  for (int64_t i = 0; i < dout.size(); ++i) dout[i] = normal(rng);

  PS_RETURN_IF_ERROR(WriteArray("values.i64", weighted.values.data(), weighted.values.size()));
  PS_RETURN_IF_ERROR(
      WriteArray("row_splits.i64", weighted.row_splits.data(), weighted.row_splits.size()));
  PS_RETURN_IF_ERROR(WriteArray("weights.f32", weighted.weights.data(), weighted.weights.size()));
  PS_RETURN_IF_ERROR(WriteArray("unique.i64", unique.keys.data(), unique.keys.size()));
  PS_RETURN_IF_ERROR(WriteArray("table.f32", table.data(), table.size()));
  PS_RETURN_IF_ERROR(WriteArray("dout.f32", dout.data(), dout.size()));

  std::ostringstream m;
  m << "{\"dim\": " << kDim << ", \"vocabulary\": " << kVocabulary
    << ", \"batch\": " << weighted.batch() << ", \"ids\": " << weighted.values.size()
    << ", \"unique\": " << num_unique << ", \"cases\": [";
  bool first = true;
  for (const char* combiner_name : {"sum", "mean", "sqrtn"}) {
    PS_ASSIGN_OR_RETURN(nn::Combiner combiner, nn::CombinerFromName(combiner_name));
    for (const RaggedIds* ids : {&unweighted, &weighted}) {
      const bool has_weights = ids == &weighted;
      const nn::BagIds bag{ids, &unique.position};
      Tensor out, drows;
      PS_RETURN_IF_ERROR(nn::EmbeddingBagForward(bag, rows, combiner, &out));
      PS_RETURN_IF_ERROR(nn::EmbeddingBagBackward(bag, num_unique, dout, combiner, &drows));
      const std::string prefix =
          std::string(combiner_name) + (has_weights ? "_weighted_" : "_unweighted_");
      PS_RETURN_IF_ERROR(WriteArray(prefix + "out.f32", out.data(), out.size()));
      PS_RETURN_IF_ERROR(WriteArray(prefix + "drows.f32", drows.data(), drows.size()));
      m << (first ? "" : ", ") << "{\"combiner\": \"" << combiner_name
        << "\", \"weighted\": " << (has_weights ? "true" : "false") << ", \"out\": \"" << prefix
        << "out.f32\", \"drows\": \"" << prefix << "drows.f32\"}";
      first = false;
    }
  }
  m << "]}\n";
  return WriteText("manifest.json", m.str());
}

Status Run() {
  if (FLAGS_out.empty()) return InvalidArgument("--out is required");
  if (FLAGS_batch <= 0) return InvalidArgument("--batch must be positive");
  if (FLAGS_what == "model") return DumpModel();
  if (FLAGS_what == "distort") return DumpDistortions();
  if (FLAGS_what == "read") return DumpDataset();
  if (FLAGS_what == "sparse_optimizers") return DumpSparseOptimizers();
  if (FLAGS_what == "embedding_bag") return DumpEmbeddingBag();
  if (FLAGS_what == "bundle") return FLAGS_bundle.empty() ? WriteBundle() : DumpBundle();
  if (FLAGS_what == "crash") return CrashSaves();
  if (FLAGS_what == "logits") return DumpLogits();
  return InvalidArgument(
      "--what must be model, distort, read, sparse_optimizers or embedding_bag, not \"" +
      FLAGS_what + "\"");
}

}  // namespace
}  // namespace pstrain

int main(int argc, char** argv) {
  pstrain::InitToolMain(
      "crosscheck_dump --what=model|distort|read|sparse_optimizers|embedding_bag "
      "--out=DIR [flags]\n"
      "Writes pstrain's numerics for tests/tensorflow/crosscheck.py.",
      &argc, &argv);
  return pstrain::RunTool(argc, argv, pstrain::Run);
}
