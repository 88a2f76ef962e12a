#include "chief/summary/event_writer.h"

#include <glog/logging.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <system_error>

#include "chief/summary/histogram.h"
#include "chief/summary/png.h"
#include "core/tfrecord.h"

namespace pstrain {
namespace {

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

StatusOr<std::string> HostName() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) {
    return Unavailable(std::string("gethostname: ") + std::strerror(errno));
  }
  return std::string(name);
}

}  // namespace

StatusOr<std::unique_ptr<EventWriter>> EventWriter::Create(const std::string& train_dir) {
  std::error_code ec;
  std::filesystem::create_directories(train_dir, ec);
  if (ec) return Unavailable("cannot create " + train_dir + ": " + ec.message());
  PS_ASSIGN_OR_RETURN(const std::string host, HostName());
  const std::string path =
      (std::filesystem::path(train_dir) /
       ("events.out.tfevents." + std::to_string(std::time(nullptr)) + "." + host))
          .string();
  // "x": fail rather than truncate another writer's file.
  std::FILE* file = std::fopen(path.c_str(), "wbx");
  if (file == nullptr) {
    const std::string message = "cannot create " + path + ": " + std::strerror(errno);
    return errno == EEXIST ? Status(Code::kAlreadyExists, message) : Unavailable(message);
  }
  std::unique_ptr<EventWriter> writer(new EventWriter(path, file));
  tensorflow::Event version;
  version.set_file_version(kEventFileVersion);
  PS_RETURN_IF_ERROR(writer->WriteEvent(std::move(version)));
  PS_RETURN_IF_ERROR(writer->Flush());
  return writer;
}

EventWriter::~EventWriter() {
  const Status s = Flush();
  if (!s.ok()) LOG(WARNING) << "event file " << path_ << ": " << s.ToString();
  std::fclose(file_);
}

Status EventWriter::AddScalar(const std::string& tag, int64_t step, float value) {
  tensorflow::Summary::Value v;
  v.set_tag(tag);
  v.set_simple_value(value);
  return WriteSummaryValue(step, std::move(v));
}

Status EventWriter::AddHistogram(const std::string& tag, int64_t step, const float* values,
                                 size_t n) {
  StatusOr<tensorflow::HistogramProto> histo = MakeHistogram(values, n);
  if (!histo.ok()) return histo.status().Annotate("histogram " + tag);
  tensorflow::Summary::Value v;
  v.set_tag(tag);
  *v.mutable_histo() = std::move(histo).value();
  return WriteSummaryValue(step, std::move(v));
}

Status EventWriter::AddImage(const std::string& tag, int64_t step, int height, int width,
                             int channels, const uint8_t* pixels) {
  StatusOr<std::string> png = EncodePng(height, width, channels, pixels);
  if (!png.ok()) return png.status().Annotate("image " + tag);
  tensorflow::Summary::Value v;
  v.set_tag(tag);
  tensorflow::Summary::Image* image = v.mutable_image();
  image->set_height(height);
  image->set_width(width);
  image->set_colorspace(channels);
  image->set_encoded_image_string(std::move(png).value());
  return WriteSummaryValue(step, std::move(v));
}

Status EventWriter::WriteSummaryValue(int64_t step, tensorflow::Summary::Value value) {
  tensorflow::Event event;
  event.set_step(step);
  *event.mutable_summary()->add_value() = std::move(value);
  return WriteEvent(std::move(event));
}

Status EventWriter::WriteEvent(tensorflow::Event event) {
  if (event.wall_time() == 0) event.set_wall_time(NowSeconds());
  std::string record;
  AppendTfRecord(event.SerializeAsString(), &record);
  std::lock_guard<std::mutex> lock(mu_);
  if (std::fwrite(record.data(), 1, record.size(), file_) != record.size()) {
    return Unavailable("cannot write " + path_ + ": " + std::strerror(errno));
  }
  return OkStatus();
}

Status EventWriter::Flush() {
  std::lock_guard<std::mutex> lock(mu_);
  if (std::fflush(file_) != 0) {
    return Unavailable("cannot flush " + path_ + ": " + std::strerror(errno));
  }
  return OkStatus();
}

}  // namespace pstrain
