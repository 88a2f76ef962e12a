#include "chief/summary/event_reader.h"

#include <gtest/gtest.h>

#include <string>

#include "chief/summary/event_writer.h"
#include "core/test_util.h"
#include "core/testing/status_assertions.h"
#include "core/tfrecord.h"

namespace pstrain {
namespace {

using test_util::ReadBytes;
using test_util::TempDir;
using test_util::WriteBytes;

TEST(EventReader, ReadsAFileTensorFlowWrote) {
  StatusOr<std::vector<tensorflow::Event>> events = ReadEventFile(PSTRAIN_TF_EVENT_FILE);
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].what_case(), tensorflow::Event::kFileVersion);
  EXPECT_EQ((*events)[0].file_version(), "brain.Event:2");
  EXPECT_GT((*events)[0].wall_time(), 1.5e9);

  const tensorflow::Event& accuracy = (*events)[1];
  EXPECT_EQ(accuracy.step(), 77);
  ASSERT_EQ(accuracy.summary().value_size(), 1);
  const tensorflow::Summary::Value& v = accuracy.summary().value(0);
  EXPECT_EQ(v.tag(), "accuracy");
  EXPECT_EQ(v.metadata().plugin_data().plugin_name(), "scalars");
  ASSERT_TRUE(ScalarValue(v).has_value());
  EXPECT_FLOAT_EQ(*ScalarValue(v), 0.99f);
  EXPECT_NE(DescribeEvent(accuracy).find("step=77 "), std::string::npos);
  EXPECT_NE(DescribeEvent(accuracy).find(" accuracy=0.99"), std::string::npos);
}

TEST(EventReader, CorruptionNamesFileAndOffset) {
  TempDir dir;
  std::string path;
  {
    StatusOr<std::unique_ptr<EventWriter>> writer = EventWriter::Create(dir.path());
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    PS_ASSERT_OK((*writer)->AddScalar("loss", 1, 1.0f));
    path = (*writer)->path();
  }
  const std::string good = ReadBytes(path);
  StatusOr<std::unique_ptr<EventReader>> reader = EventReader::Open(path);
  PS_ASSERT_OK(reader);
  tensorflow::Event first;
  PS_ASSERT_OK((*reader)->Next(&first));
  const uint64_t second_at = (*reader)->offset();

  std::string bad = good;
  bad[bad.size() - 6] ^= 1;  // inside the second record's data
  WriteBytes(path, bad);
  Status s = ReadEventFile(path).status();
  EXPECT_EQ(s.code(), Code::kDataLoss);
  EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("CRC mismatch"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("offset " + std::to_string(second_at)), std::string::npos)
      << s.message();

  WriteBytes(path, good.substr(0, good.size() - 1));
  s = ReadEventFile(path).status();
  EXPECT_EQ(s.code(), Code::kDataLoss);
  EXPECT_NE(s.message().find("truncated"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("offset " + std::to_string(second_at)), std::string::npos)
      << s.message();
}

TEST(EventReader, RecordThatIsNotAnEventIsDataLoss) {
  TempDir dir;
  const std::string path = dir.path() + "/events";
  std::string bytes;
  AppendTfRecord("\xff\xff\xff", &bytes);  // an invalid tag: not a protobuf
  WriteBytes(path, bytes);
  const Status s = ReadEventFile(path).status();
  EXPECT_EQ(s.code(), Code::kDataLoss);
  EXPECT_NE(s.message().find("not an Event"), std::string::npos) << s.message();
}

TEST(EventReader, DescribesEachKindOfValue) {
  tensorflow::Event e;
  e.set_step(5);
  e.set_wall_time(1700000000.5);
  tensorflow::Summary::Value* scalar = e.mutable_summary()->add_value();
  scalar->set_tag("loss");
  scalar->set_simple_value(0.5f);
  tensorflow::Summary::Value* histo = e.mutable_summary()->add_value();
  histo->set_tag("w");
  histo->mutable_histo()->set_num(3);
  histo->mutable_histo()->set_min(-1);
  histo->mutable_histo()->set_max(2);
  tensorflow::Summary::Value* image = e.mutable_summary()->add_value();
  image->set_tag("input");
  image->mutable_image()->set_width(28);
  image->mutable_image()->set_height(14);
  image->mutable_image()->set_colorspace(1);
  EXPECT_EQ(DescribeEvent(e),
            "step=5 wall_time=1700000000.500000 loss=0.5 w=histogram(num=3 min=-1 max=2) "
            "input=image(28x14x1)");
}

}  // namespace
}  // namespace pstrain
