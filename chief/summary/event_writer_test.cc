#include "chief/summary/event_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <limits>
#include <numeric>
#include <regex>
#include <thread>
#include <vector>

#include "chief/summary/event_reader.h"
#include "core/test_util.h"
#include "core/testing/status_assertions.h"

namespace pstrain {
namespace {

using test_util::TempDir;

std::unique_ptr<EventWriter> NewWriter(const std::string& dir) {
  StatusOr<std::unique_ptr<EventWriter>> writer = EventWriter::Create(dir);
  EXPECT_TRUE(writer.ok()) << writer.status().ToString();
  return writer.ok() ? std::move(writer).value() : nullptr;
}

TEST(EventWriter, NamesTheFileAsTensorFlowDoes) {
  TempDir dir;
  const std::string sub = dir.path() + "/made/by/create";
  std::unique_ptr<EventWriter> writer = NewWriter(sub);
  ASSERT_NE(writer, nullptr);
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  const std::string name = std::filesystem::path(writer->path()).filename().string();
  EXPECT_TRUE(std::regex_match(name, std::regex("events\\.out\\.tfevents\\.[0-9]{10}\\..+")))
      << name;
  EXPECT_EQ(name.substr(name.size() - std::string(host).size()), host);
  EXPECT_EQ(std::filesystem::path(writer->path()).parent_path(), sub);
}

TEST(EventWriter, FirstRecordIsTheFileVersion) {
  TempDir dir;
  std::unique_ptr<EventWriter> writer = NewWriter(dir.path());
  ASSERT_NE(writer, nullptr);
  // Create flushed it: readable before any Flush.
  StatusOr<std::vector<tensorflow::Event>> events = ReadEventFile(writer->path());
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*events)[0].file_version(), "brain.Event:2");
  EXPECT_GT((*events)[0].wall_time(), 1.6e9);
}

TEST(EventWriter, ScalarsHistogramsAndImagesReadBack) {
  TempDir dir;
  std::unique_ptr<EventWriter> writer = NewWriter(dir.path());
  ASSERT_NE(writer, nullptr);
  PS_ASSERT_OK(writer->AddScalar("loss", 10, 0.25f));
  const std::vector<float> weights = {-1.0f, 0.5f, 0.5f, 3.0f};
  PS_ASSERT_OK(writer->AddHistogram("weights", 10, weights.data(), weights.size()));
  const std::vector<uint8_t> pixels(4 * 3 * 3, 200);
  PS_ASSERT_OK(writer->AddImage("input", 20, 4, 3, 3, pixels.data()));
  PS_ASSERT_OK(writer->Flush());

  StatusOr<std::vector<tensorflow::Event>> events = ReadEventFile(writer->path());
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  ASSERT_EQ(events->size(), 4u);

  const tensorflow::Event& scalar = (*events)[1];
  EXPECT_EQ(scalar.step(), 10);
  ASSERT_EQ(scalar.summary().value_size(), 1);
  EXPECT_EQ(scalar.summary().value(0).tag(), "loss");
  EXPECT_EQ(scalar.summary().value(0).simple_value(), 0.25f);

  const tensorflow::HistogramProto& h = (*events)[2].summary().value(0).histo();
  EXPECT_EQ((*events)[2].summary().value(0).tag(), "weights");
  EXPECT_EQ(h.num(), 4.0);
  EXPECT_EQ(h.min(), -1.0);
  EXPECT_EQ(h.max(), 3.0);
  EXPECT_EQ(h.sum(), 3.0);
  EXPECT_EQ(std::accumulate(h.bucket().begin(), h.bucket().end(), 0.0), 4.0);

  const tensorflow::Event& image_event = (*events)[3];
  EXPECT_EQ(image_event.step(), 20);
  const tensorflow::Summary::Image& image = image_event.summary().value(0).image();
  EXPECT_EQ(image.height(), 4);
  EXPECT_EQ(image.width(), 3);
  EXPECT_EQ(image.colorspace(), 3);
  EXPECT_EQ(image.encoded_image_string().substr(1, 3), "PNG");

  for (const tensorflow::Event& e : *events) EXPECT_GT(e.wall_time(), 1.6e9);
}

TEST(EventWriter, BadInputWritesNothing) {
  TempDir dir;
  std::unique_ptr<EventWriter> writer = NewWriter(dir.path());
  ASSERT_NE(writer, nullptr);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(writer->AddHistogram("w", 1, &nan, 1).code(), Code::kInvalidArgument);
  const uint8_t pixel = 0;
  EXPECT_EQ(writer->AddImage("i", 1, 1, 1, 7, &pixel).code(), Code::kInvalidArgument);
  PS_ASSERT_OK(writer->Flush());
  StatusOr<std::vector<tensorflow::Event>> events = ReadEventFile(writer->path());
  PS_ASSERT_OK(events);
  EXPECT_EQ(events->size(), 1u);
}

TEST(EventWriter, ConcurrentWritersKeepRecordsWhole) {
  TempDir dir;
  std::unique_ptr<EventWriter> writer = NewWriter(dir.path());
  ASSERT_NE(writer, nullptr);
  constexpr int kThreads = 4, kPerThread = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&writer, t] {
      const std::vector<float> values(50, static_cast<float>(t));
      for (int i = 0; i < kPerThread; ++i) {
        PS_EXPECT_OK(writer->AddScalar("t" + std::to_string(t), i, static_cast<float>(i)));
        PS_EXPECT_OK(writer->AddHistogram("h", i, values.data(), values.size()));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  writer.reset();  // the destructor flushes
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    files.push_back(entry.path().string());
  }
  ASSERT_EQ(files.size(), 1u);
  StatusOr<std::vector<tensorflow::Event>> events = ReadEventFile(files[0]);
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  EXPECT_EQ(events->size(), 1u + 2u * kThreads * kPerThread);
}

}  // namespace
}  // namespace pstrain
