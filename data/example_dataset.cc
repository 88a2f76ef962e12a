#include "data/example_dataset.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <memory>

#include "proto/example.pb.h"

namespace pstrain {
namespace data {
namespace {

// Bounds each of height, width and depth, so their product cannot overflow.
constexpr int64_t kMaxSide = int64_t{1} << 20;

const char* KindName(const tensorflow::Feature& f) {
  switch (f.kind_case()) {
    case tensorflow::Feature::kBytesList:
      return "bytes_list";
    case tensorflow::Feature::kFloatList:
      return "float_list";
    case tensorflow::Feature::kInt64List:
      return "int64_list";
    case tensorflow::Feature::KIND_NOT_SET:
      break;
  }
  return "empty";
}

// Feature `name` of `features`, which must be of kind `kind`.
StatusOr<const tensorflow::Feature*> FindFeature(const tensorflow::Features& features,
                                                 const std::string& name,
                                                 tensorflow::Feature::KindCase kind,
                                                 const char* kind_name, const std::string& where) {
  const auto it = features.feature().find(name);
  if (it == features.feature().end()) {
    return InvalidArgument(where + " has no \"" + name + "\" feature");
  }
  if (it->second.kind_case() != kind) {
    return InvalidArgument(where + ": feature \"" + name + "\" is " + KindName(it->second) +
                           ", expected " + kind_name);
  }
  return &it->second;
}

StatusOr<int64_t> OneInt64(const tensorflow::Features& features, const std::string& name,
                           const std::string& where) {
  PS_ASSIGN_OR_RETURN(
      const tensorflow::Feature* f,
      FindFeature(features, name, tensorflow::Feature::kInt64List, "int64_list", where));
  if (f->int64_list().value_size() != 1) {
    return InvalidArgument(where + ": feature \"" + name + "\" holds " +
                           std::to_string(f->int64_list().value_size()) + " values, expected 1");
  }
  return f->int64_list().value(0);
}

std::string ShapeText(int64_t h, int64_t w, int64_t d) {
  return std::to_string(h) + "x" + std::to_string(w) + "x" + std::to_string(d);
}

// Adds the image of Example `ex` to *ds (whose shape it sets if empty).
Status AddExample(const tensorflow::Example& ex, const std::string& where, ImageDataset* ds) {
  const tensorflow::Features& features = ex.features();
  PS_ASSIGN_OR_RETURN(
      const tensorflow::Feature* raw,
      FindFeature(features, "image_raw", tensorflow::Feature::kBytesList, "bytes_list", where));
  if (raw->bytes_list().value_size() != 1) {
    return InvalidArgument(where + ": feature \"image_raw\" holds " +
                           std::to_string(raw->bytes_list().value_size()) + " values, expected 1");
  }
  PS_ASSIGN_OR_RETURN(const int64_t label, OneInt64(features, "label", where));
  PS_ASSIGN_OR_RETURN(const int64_t height, OneInt64(features, "height", where));
  PS_ASSIGN_OR_RETURN(const int64_t width, OneInt64(features, "width", where));
  PS_ASSIGN_OR_RETURN(const int64_t depth, OneInt64(features, "depth", where));
  if (label < 0 || label >= 10) {
    return InvalidArgument(where + ": label " + std::to_string(label) + " is not in 0..9");
  }
  for (int64_t side : {height, width, depth}) {
    if (side < 1 || side > kMaxSide) {
      return InvalidArgument(where + ": image shape " + ShapeText(height, width, depth) +
                             " (height x width x depth) is not positive or too large");
    }
  }
  const std::string& pixels = raw->bytes_list().value(0);
  if (static_cast<int64_t>(pixels.size()) != height * width * depth) {
    return InvalidArgument(
        where + ": image_raw holds " + std::to_string(pixels.size()) +
        " bytes, expected height*width*depth = " + ShapeText(height, width, depth) + " = " +
        std::to_string(height * width * depth));
  }
  if (ds->count == 0) {
    ds->rows = static_cast<int>(height);
    ds->cols = static_cast<int>(width);
    ds->depth = static_cast<int>(depth);
  } else if (height != ds->rows || width != ds->cols || depth != ds->depth) {
    return InvalidArgument(where + ": image is " + ShapeText(height, width, depth) +
                           " but the file's first is " + ShapeText(ds->rows, ds->cols, ds->depth));
  }
  ds->pixels.insert(ds->pixels.end(), pixels.begin(), pixels.end());
  ds->labels.push_back(static_cast<int32_t>(label));
  ++ds->count;
  return OkStatus();
}

tensorflow::Feature Int64Feature(int64_t v) {
  tensorflow::Feature f;
  f.mutable_int64_list()->add_value(v);
  return f;
}

}  // namespace

std::string SerializeImageExample(const uint8_t* pixels, int height, int width, int depth,
                                  int64_t label) {
  tensorflow::Example ex;
  auto& map = *ex.mutable_features()->mutable_feature();
  map["height"] = Int64Feature(height);
  map["width"] = Int64Feature(width);
  map["depth"] = Int64Feature(depth);
  map["label"] = Int64Feature(label);
  map["image_raw"].mutable_bytes_list()->add_value(reinterpret_cast<const char*>(pixels),
                                                   static_cast<size_t>(height) * width * depth);
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);  // map entries in key order
    ex.SerializeToCodedStream(&coded);
  }
  return out;
}

StatusOr<ImageDataset> ReadExampleFile(const std::string& path) {
  PS_ASSIGN_OR_RETURN(std::unique_ptr<TfRecordReader> reader, TfRecordReader::Open(path));
  ImageDataset ds;
  tensorflow::Example ex;
  std::string record;
  for (;;) {
    const int64_t index = reader->record_index();
    const uint64_t offset = reader->offset();
    const Status s = reader->ReadRecord(&record);
    if (s.code() == Code::kOutOfRange) break;
    PS_RETURN_IF_ERROR(s);
    const std::string where =
        path + ": record " + std::to_string(index) + " at offset " + std::to_string(offset);
    if (!ex.ParseFromString(record)) {
      return InvalidArgument(where + " is not a tf.train.Example");
    }
    PS_RETURN_IF_ERROR(AddExample(ex, where, &ds));
  }
  if (ds.count == 0) return InvalidArgument(path + ": no records, so no images");
  return ds;
}

Status WriteExampleFile(const ImageDataset& ds, const std::string& path,
                        TfRecordCompression compression) {
  PS_ASSIGN_OR_RETURN(std::unique_ptr<TfRecordWriter> writer,
                      TfRecordWriter::Create(path, compression));
  const int64_t size = ds.image_size();
  for (int64_t i = 0; i < ds.count; ++i) {
    PS_RETURN_IF_ERROR(writer->Write(SerializeImageExample(ds.pixels.data() + i * size, ds.rows,
                                                           ds.cols, ds.depth, ds.labels[i])));
  }
  return writer->Close();
}

}  // namespace data
}  // namespace pstrain
