// EventReader: reads the Events of a TensorBoard event file (ours or
// TensorFlow's), verifying both CRCs of every TFRecord. Not thread-safe: one
// reader per thread.
#ifndef PSTRAIN_CHIEF_SUMMARY_EVENT_READER_H_
#define PSTRAIN_CHIEF_SUMMARY_EVENT_READER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tfrecord.h"
#include "proto/event.pb.h"

namespace pstrain {

class EventReader {
 public:
  // NotFound if the file does not exist, Unavailable if it cannot be opened.
  static StatusOr<std::unique_ptr<EventReader>> Open(const std::string& path);

  // Reads the next Event into *event. OutOfRange after the last one.
  // DataLoss naming the file and the record's offset for a truncated record,
  // a CRC mismatch or a record that is not an Event; do not read on after it.
  Status Next(tensorflow::Event* event);

  // Byte offset of the next record.
  uint64_t offset() const { return records_->offset(); }

 private:
  explicit EventReader(std::unique_ptr<TfRecordReader> records) : records_(std::move(records)) {}
  std::unique_ptr<TfRecordReader> records_;
};

// Every Event of the file at `path`, or the first error Next returned.
StatusOr<std::vector<tensorflow::Event>> ReadEventFile(const std::string& path);

// The number a scalar summary value holds: simple_value (TF1, pstrain), or a
// float or double rank-0 tensor (TF2's tf.summary.scalar). nullopt otherwise.
std::optional<double> ScalarValue(const tensorflow::Summary::Value& value);

// One line describing `event`: "step=77 wall_time=1700000000.123456" then
// each part, e.g. "file_version=brain.Event:2", "loss=0.25",
// "weights=histogram(num=100 min=-1 max=1)", "input=image(28x28x1)".
std::string DescribeEvent(const tensorflow::Event& event);

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_SUMMARY_EVENT_READER_H_
