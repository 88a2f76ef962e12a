// EventWriter: writes a TensorBoard event file, TensorFlow's EventsWriter in
// miniature. The file is "<train_dir>/events.out.tfevents.<unix seconds>.<hostname>";
// its first record is the Event with file_version "brain.Event:2", then one
// Event per Add call, each framed as a TFRecord (core/tfrecord.h).
//
// Thread-safety: every method may be called from any thread at once; a mutex
// orders the records. Summaries are encoded (histogram, PNG) outside the lock.
//
// Durability: records are buffered; Flush (and the destructor) hand them to
// the OS, so a killed process loses at most what was added since the last
// Flush. A torn last record is what a reader then reports as truncated.
#ifndef PSTRAIN_CHIEF_SUMMARY_EVENT_WRITER_H_
#define PSTRAIN_CHIEF_SUMMARY_EVENT_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "core/status.h"
#include "proto/event.pb.h"

namespace pstrain {

inline constexpr char kEventFileVersion[] = "brain.Event:2";

class EventWriter {
 public:
  // Creates train_dir if needed and the event file in it, and writes the
  // file_version event. AlreadyExists if a file of that name exists (another
  // writer started on this host in the same second); Unavailable, with
  // errno's text, if the directory or file cannot be made.
  static StatusOr<std::unique_ptr<EventWriter>> Create(const std::string& train_dir);
  // Flushes (logging a failure) and closes the file.
  ~EventWriter();
  EventWriter(const EventWriter&) = delete;
  EventWriter& operator=(const EventWriter&) = delete;

  // One Event at `step` holding a Summary with one value named `tag`.
  Status AddScalar(const std::string& tag, int64_t step, float value);
  // The histogram of values[0, n) (chief/summary/histogram.h): InvalidArgument,
  // and nothing written, if a value is NaN or infinite.
  Status AddHistogram(const std::string& tag, int64_t step, const float* values, size_t n);
  // A PNG of height x width pixels of `channels` (1 gray, 2 gray + alpha,
  // 3 RGB, 4 RGBA) interleaved 8-bit samples, row-major. InvalidArgument for
  // a bad size or channel count.
  Status AddImage(const std::string& tag, int64_t step, int height, int width, int channels,
                  const uint8_t* pixels);

  // Writes `event` as it is, stamping wall_time with now if it is 0.
  // Unavailable on a write error.
  Status WriteEvent(tensorflow::Event event);

  // Hands every buffered record to the OS. Unavailable on a write error.
  Status Flush();

  const std::string& path() const { return path_; }

 private:
  EventWriter(std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {}
  Status WriteSummaryValue(int64_t step, tensorflow::Summary::Value value);

  const std::string path_;
  std::mutex mu_;
  std::FILE* const file_;  // written under mu_
};

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_SUMMARY_EVENT_WRITER_H_
