// A live ps under a flood on its tensor port while real workers train: a
// thousand idle connections and a score of senders trickling a byte every
// 100 ms. The worker already training trains on, a worker that joins during
// the flood (over TCP, beside the flood) pushes and pulls, and the job ends
// as usual.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <regex>
#include <thread>
#include <vector>

#include "core/descriptor_limit.h"
#include "ps/rpc/ps_client.h"
#include "ps/tcp/socket.h"
#include "ps/tcp/tensor_frames.h"
#include "tests/integration/process_harness.h"

namespace pstrain {
namespace {

using testing::TestCluster;

// The steps of a worker's progress lines.
std::vector<int64_t> ProgressSteps(const std::string& output) {
  std::vector<int64_t> steps;
  std::regex re(R"(: step (\d+), loss = )");
  for (std::sregex_iterator it(output.begin(), output.end(), re), end; it != end; ++it) {
    steps.push_back(std::stoll((*it)[1]));
  }
  return steps;
}

TEST(ChannelFlood, WorkersTrainThroughAThousandIdleConnectionsAndSlowSenders) {
  if (!testing::HaveFashionMnist()) GTEST_SKIP() << "no Fashion-MNIST (dataset-fashion-mnist)";
  const uint64_t files = RaiseDescriptorLimit();
  if (files < 2048) GTEST_SKIP() << "at most " << files << " descriptors here";

  testing::TempDir dir("channel_flood");
  TestCluster cluster(dir.path(), 1, 2,
                      {"--max_steps=400", "--epochs=0", "--log_frequency=10", "--batch_size=64",
                       "--learning_rate=0.01", "--save_checkpoint_secs=0", "--http_port=-1",
                       "--save_summaries_steps=0", "--train_dir=" + dir.path()});
  // Slow senders are cut off 2 s into a frame: well before the job ends,
  // however fast this machine trains.
  cluster.Start("ps:0", {"--tensor_frame_timeout_secs=2"});
  cluster.Start("chief:0");
  cluster.Start("worker:0");
  ASSERT_TRUE(cluster.WaitForStep(40, std::chrono::seconds(120))) << cluster.Tails();

  PsClient ps(0, cluster.spec().Address("ps", 0));
  auto status = ps.GetStatus(std::chrono::seconds(10));
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  const int port = status->tensor_port();
  ASSERT_GT(port, 0);
  std::vector<std::unique_ptr<tcp::Socket>> idle, slow;
  for (int i = 0; i < 1000; ++i) {
    auto s = tcp::Socket::Connect("127.0.0.1", port, std::chrono::seconds(5));
    ASSERT_TRUE(s.ok()) << i << ": " << s.status().ToString();
    idle.push_back(std::move(s).value());
  }
  for (int i = 0; i < 20; ++i) {
    slow.push_back(
        std::move(tcp::Socket::Connect("127.0.0.1", port, std::chrono::seconds(5))).value());
  }
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    // A push header frame announcing 1000 bytes of metadata, sent a byte
    // every 100 ms: the frame would take 100 s.
    std::string frame(tcp::kFrameHeaderBytes, '\0');
    const uint32_t head[4] = {tcp::kFrameMagic, 1, 1000, 0};
    std::memcpy(frame.data(), head, sizeof(head));
    frame.append(1000, 'x');
    for (size_t i = 0; i < frame.size() && !stop; ++i) {
      for (auto& s : slow) {
        struct iovec one = {&frame[i], 1};
        (void)s->Write(&one, 1);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  // A worker joining now, over TCP like the flood.
  cluster.Start("worker:1", {"--tensor_shm=false"});
  EXPECT_TRUE(cluster.WaitForExit("chief:0", std::chrono::seconds(300))) << cluster.Tails();
  stop = true;
  trickle.join();
  EXPECT_TRUE(cluster.task("chief:0")->process()->succeeded()) << cluster.Tails();
  for (const char* t : {"worker:0", "worker:1", "ps:0"}) {
    EXPECT_TRUE(cluster.WaitForExit(t, std::chrono::seconds(60))) << t;
    EXPECT_TRUE(cluster.task(t)->process()->succeeded()) << t << cluster.Output(t);
  }
  // worker:1 trained: it pushed and pulled through the flood.
  EXPECT_FALSE(ProgressSteps(cluster.Output("worker:1")).empty()) << cluster.Output("worker:1");
  // The slow senders were cut off at their frames' deadline; the ps said so.
  EXPECT_NE(cluster.Output("ps:0").find("tensor channel: closed the connection from"),
            std::string::npos)
      << cluster.Output("ps:0");
}

}  // namespace
}  // namespace pstrain
