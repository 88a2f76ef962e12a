#include "chief/summary/event_reader.h"

#include <cstdio>
#include <cstring>
#include <sstream>

namespace pstrain {

StatusOr<std::unique_ptr<EventReader>> EventReader::Open(const std::string& path) {
  PS_ASSIGN_OR_RETURN(std::unique_ptr<TfRecordReader> records, TfRecordReader::Open(path));
  return std::unique_ptr<EventReader>(new EventReader(std::move(records)));
}

Status EventReader::Next(tensorflow::Event* event) {
  const uint64_t at = records_->offset();
  std::string data;
  PS_RETURN_IF_ERROR(records_->ReadRecord(&data));
  if (!event->ParseFromString(data)) {
    return DataLoss(records_->path() + ": the record at offset " + std::to_string(at) +
                    " is not an Event");
  }
  return OkStatus();
}

StatusOr<std::vector<tensorflow::Event>> ReadEventFile(const std::string& path) {
  PS_ASSIGN_OR_RETURN(std::unique_ptr<EventReader> reader, EventReader::Open(path));
  std::vector<tensorflow::Event> events;
  for (;;) {
    tensorflow::Event event;
    const Status s = reader->Next(&event);
    if (s.code() == Code::kOutOfRange) return events;
    PS_RETURN_IF_ERROR(s);
    events.push_back(std::move(event));
  }
}

std::optional<double> ScalarValue(const tensorflow::Summary::Value& value) {
  if (value.value_case() == tensorflow::Summary::Value::kSimpleValue) return value.simple_value();
  if (value.value_case() != tensorflow::Summary::Value::kTensor) return std::nullopt;
  const tensorflow::TensorProto& t = value.tensor();
  if (t.tensor_shape().dim_size() != 0) return std::nullopt;
  const std::string& content = t.tensor_content();
  switch (t.dtype()) {
    case tensorflow::DT_FLOAT:
      if (t.float_val_size() == 1) return t.float_val(0);
      if (content.size() == sizeof(float)) {
        float f;
        std::memcpy(&f, content.data(), sizeof(f));  // little-endian, as TF writes it
        return f;
      }
      return std::nullopt;
    case tensorflow::DT_DOUBLE:
      if (t.double_val_size() == 1) return t.double_val(0);
      if (content.size() == sizeof(double)) {
        double d;
        std::memcpy(&d, content.data(), sizeof(d));
        return d;
      }
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

std::string DescribeEvent(const tensorflow::Event& event) {
  char wall_time[32];
  std::snprintf(wall_time, sizeof(wall_time), "%.6f", event.wall_time());
  std::ostringstream out;
  out << "step=" << event.step() << " wall_time=" << wall_time;
  switch (event.what_case()) {
    case tensorflow::Event::kFileVersion:
      out << " file_version=" << event.file_version();
      break;
    case tensorflow::Event::kSummary:
      for (const tensorflow::Summary::Value& v : event.summary().value()) {
        out << " " << v.tag() << "=";
        if (const std::optional<double> scalar = ScalarValue(v)) {
          out << *scalar;
        } else if (v.has_histo()) {
          out << "histogram(num=" << v.histo().num() << " min=" << v.histo().min()
              << " max=" << v.histo().max() << ")";
        } else if (v.has_image()) {
          out << "image(" << v.image().width() << "x" << v.image().height() << "x"
              << v.image().colorspace() << ")";
        } else {
          out << "(other)";
        }
      }
      break;
    case tensorflow::Event::kSessionLog:
      out << " session_log="
          << tensorflow::SessionLog::SessionStatus_Name(event.session_log().status());
      break;
    case tensorflow::Event::kGraphDef:
      out << " graph_def(" << event.graph_def().size() << " bytes)";
      break;
    case tensorflow::Event::kMetaGraphDef:
      out << " meta_graph_def(" << event.meta_graph_def().size() << " bytes)";
      break;
    case tensorflow::Event::kTaggedRunMetadata:
      out << " run_metadata=" << event.tagged_run_metadata().tag();
      break;
    case tensorflow::Event::kLogMessage:  // deprecated in TensorFlow
      out << " log_message";
      break;
    case tensorflow::Event::WHAT_NOT_SET:
      break;
  }
  return out.str();
}

}  // namespace pstrain
