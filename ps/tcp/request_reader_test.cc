// RequestReader gathers exactly one request, whatever pieces its bytes come
// in: ready once whole (or once a frame past its cap begins), the next
// request's bytes kept for it, a frame that is not one ending the request
// for its server to refuse, and nothing held between requests.
#include "ps/tcp/request_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "core/tensor.h"
#include "core/testing/status_assertions.h"
#include "proto/ps.pb.h"

namespace pstrain {
namespace tcp {
namespace {

using Gathered = RequestReader::Gathered;

// Bytes the test lets in, as a socket has them: ReadSome takes what has
// come; ReadFull fails when that is not enough.
class LetInStream : public ByteStream {
 public:
  void Let(const std::string& bytes) { bytes_ += bytes; }
  void HangUp() { closed_ = true; }
  StatusOr<size_t> ReadSome(void* data, size_t n) override {
    if (at_ == bytes_.size()) {
      if (closed_) return Unavailable("hung up");
      return size_t{0};
    }
    n = std::min(n, bytes_.size() - at_);
    std::memcpy(data, bytes_.data() + at_, n);
    at_ += n;
    return n;
  }
  Status ReadFull(void* data, size_t n) override {
    if (bytes_.size() - at_ < n) return Unavailable("cut short");
    std::memcpy(data, bytes_.data() + at_, n);
    at_ += n;
    return OkStatus();
  }
  Status Write(const struct iovec* iov, int count) override {
    for (int i = 0; i < count; ++i) {
      written_.append(static_cast<const char*>(iov[i].iov_base), iov[i].iov_len);
    }
    return OkStatus();
  }
  const std::string& written() const { return written_; }

 private:
  std::string bytes_, written_;
  size_t at_ = 0;
  bool closed_ = false;
};

std::string Bytes(const FrameBatch& frames) {
  LetInStream out;
  PS_EXPECT_OK(frames.WriteTo(&out));
  return out.written();
}

// A push of one tensor of n floats: header, chunk, End.
std::string Push(int64_t n) {
  proto::PushHeader header;
  header.set_num_tensors(1);
  Tensor g({n});
  g.Fill(0.25f);
  FrameBatch frames;
  frames.Add(FrameKind::kPushHeader, &header);
  frames.AddTensor("w", g, proto::DT_FLOAT);
  frames.Add(FrameKind::kEnd, nullptr);
  return Bytes(frames);
}

std::string Pull(int64_t fingerprint) {
  proto::PullRequest pull;
  pull.set_placement_fingerprint(fingerprint);
  FrameBatch frames;
  frames.Add(FrameKind::kPullRequest, &pull);
  return Bytes(frames);
}

// Reads `n` bytes of the request as its serving thread does.
std::string Serve(RequestReader* reader, ByteStream* rest, size_t n) {
  RequestReader::Stream stream(reader, rest);
  std::string got(n, '\0');
  const Status read = stream.ReadFull(got.data(), n);
  EXPECT_TRUE(read.ok()) << read.ToString();
  return got;
}

TEST(RequestReader, APushCutAnywhereIsReadyOnlyOnceItsEndHasCome) {
  const std::string push = Push(100);
  for (size_t cut = 0; cut < push.size(); ++cut) {
    LetInStream in;
    RequestReader reader;
    in.Let(push.substr(0, cut));
    auto first = reader.Gather(&in, RequestReader::kDefaultCap);
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    EXPECT_EQ(*first, cut == 0 ? Gathered::kNothing : Gathered::kPartial) << cut;
    in.Let(push.substr(cut));
    auto second = reader.Gather(&in, RequestReader::kDefaultCap);
    ASSERT_TRUE(second.ok()) << second.status().ToString();
    ASSERT_EQ(*second, Gathered::kReady) << cut;
    EXPECT_EQ(Serve(&reader, &in, push.size()), push) << cut;
    reader.Served();
    EXPECT_FALSE(reader.pending());
    EXPECT_EQ(reader.held(), 0u) << "an idle connection holds no buffer";
  }
}

TEST(RequestReader, BytesOfTheNextRequestWaitForIt) {
  LetInStream in;
  RequestReader reader;
  const std::string first = Pull(1), second = Pull(2);
  in.Let(first + second.substr(0, 5));
  auto gathered = reader.Gather(&in, RequestReader::kDefaultCap);
  PS_ASSERT_OK(gathered);
  ASSERT_EQ(*gathered, Gathered::kReady);
  EXPECT_EQ(Serve(&reader, &in, first.size()), first);
  reader.Served();
  EXPECT_TRUE(reader.pending()) << "the second pull's first bytes were dropped";
  gathered = reader.Gather(&in, RequestReader::kDefaultCap);
  PS_ASSERT_OK(gathered);
  EXPECT_EQ(*gathered, Gathered::kPartial);
  in.Let(second.substr(5));
  gathered = reader.Gather(&in, RequestReader::kDefaultCap);
  PS_ASSERT_OK(gathered);
  ASSERT_EQ(*gathered, Gathered::kReady);
  EXPECT_EQ(Serve(&reader, &in, second.size()), second);
}

TEST(RequestReader, AHeaderThatIsNotAFramesEndsTheRequestForItsServerToRefuse) {
  LetInStream in;
  RequestReader reader;
  in.Let(std::string(kFrameHeaderBytes, 'x'));
  auto gathered = reader.Gather(&in, RequestReader::kDefaultCap);
  PS_ASSERT_OK(gathered);
  EXPECT_EQ(*gathered, Gathered::kReady);
  RequestReader::Stream stream(&reader, &in);  // what its server reads: refused, naming why
  auto frame = ReadFrame(&stream);
  EXPECT_EQ(frame.status().code(), Code::kInvalidArgument) << frame.status().ToString();
  EXPECT_NE(frame.status().message().find("bad magic"), std::string::npos)
      << frame.status().ToString();
}

TEST(RequestReader, AFramePastTheCapIsReadyAsItBeginsAndItsDataReadStraightFromTheStream) {
  const std::string push = Push(1 << 16);  // 256 KB of data
  const size_t cap = 64 << 10;
  LetInStream in;
  RequestReader reader;
  in.Let(push);
  auto gathered = reader.Gather(&in, cap);
  PS_ASSERT_OK(gathered);
  ASSERT_EQ(*gathered, Gathered::kReady);
  EXPECT_LE(reader.held(), cap) << "the loop held the large frame's data";
  EXPECT_EQ(Serve(&reader, &in, push.size()), push);
}

TEST(RequestReader, AFrameClaimingMoreThanAnyCouldCarryIsReadyAtOnce) {
  proto::PushHeader header;
  FrameBatch frames;
  frames.Add(FrameKind::kPushHeader, &header);
  std::string bytes = Bytes(frames);
  // A chunk frame's header announcing 2^64 - 2 bytes of data, and no meta.
  const uint32_t head[4] = {kFrameMagic, static_cast<uint32_t>(FrameKind::kChunk), 0, 0};
  const uint64_t data_bytes = UINT64_MAX - 1;
  bytes.append(reinterpret_cast<const char*>(head), sizeof(head));
  bytes.append(reinterpret_cast<const char*>(&data_bytes), sizeof(data_bytes));
  bytes.append(1000, 'x');
  LetInStream in;
  RequestReader reader;
  in.Let(bytes);
  auto gathered = reader.Gather(&in, RequestReader::kDefaultCap);
  ASSERT_TRUE(gathered.ok()) << gathered.status().ToString();
  EXPECT_EQ(*gathered, Gathered::kReady);  // its server refuses it, as more than it may hold
  EXPECT_LE(reader.held(), size_t{64} << 10);
}

TEST(RequestReader, AClientThatHangsUpMidRequestLeavesWhatItSentToBeRefused) {
  const std::string push = Push(100);
  LetInStream in;
  RequestReader reader;
  in.Let(push.substr(0, push.size() / 2));
  in.HangUp();
  auto gathered = reader.Gather(&in, RequestReader::kDefaultCap);
  EXPECT_EQ(gathered.status().code(), Code::kUnavailable) << gathered.status().ToString();
  EXPECT_TRUE(reader.pending());
  LetInStream idle;
  idle.HangUp();
  RequestReader none;
  EXPECT_EQ(none.Gather(&idle, RequestReader::kDefaultCap).status().code(), Code::kUnavailable);
  EXPECT_FALSE(none.pending());
}

}  // namespace
}  // namespace tcp
}  // namespace pstrain
