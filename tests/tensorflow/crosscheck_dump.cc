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
#include <gflags/gflags.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/task_main.h"
#include "data/dataset_loader.h"
#include "data/distortions.h"
#include "nn/model.h"

DEFINE_string(what, "model", "model, distort or read");
DEFINE_string(out, "", "Directory to write into (must exist)");
DEFINE_string(model, "cifar10", "--what=model: a built-in network or a ModelSpec file");
DEFINE_int32(batch, 8, "--what=model: images in the batch; --what=distort: images");
DEFINE_uint64(seed, 1, "Seed of the variables, images and draws");
DEFINE_string(data_dir, "", "--what=read: the data set's directory");
DEFINE_string(data_format, "auto", "--what=read: idx, cifar, tfrecord or auto");
DEFINE_string(split, "train", "--what=read: train or test");

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

Status Run() {
  if (FLAGS_out.empty()) return InvalidArgument("--out is required");
  if (FLAGS_batch <= 0) return InvalidArgument("--batch must be positive");
  if (FLAGS_what == "model") return DumpModel();
  if (FLAGS_what == "distort") return DumpDistortions();
  if (FLAGS_what == "read") return DumpDataset();
  return InvalidArgument("--what must be model, distort or read, not \"" + FLAGS_what + "\"");
}

}  // namespace
}  // namespace pstrain

int main(int argc, char** argv) {
  pstrain::InitTaskMain(
      "crosscheck_dump --what=model|distort|read --out=DIR [flags]\n"
      "Writes pstrain's numerics for tests/tensorflow/crosscheck.py.",
      &argc, &argv);
  return pstrain::RunTool(argc, argv, pstrain::Run);
}
