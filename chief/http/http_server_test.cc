#include "chief/http/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace pstrain {
namespace {

// A blocking loopback connection; closes on destruction.
class Client {
 public:
  explicit Client(int port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = fd_ >= 0 && connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~Client() {
    if (fd_ >= 0) close(fd_);
  }
  bool connected() const { return connected_; }

  bool Send(const std::string& data) {
    size_t sent = 0;
    while (sent < data.size()) {
      const ssize_t n = send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }
  void ShutdownWrite() { shutdown(fd_, SHUT_WR); }

  // Everything until the server closes.
  std::string ReadAll() {
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = recv(fd_, buf, sizeof(buf), 0)) > 0) out.append(buf, static_cast<size_t>(n));
    return out;
  }

 private:
  int fd_;
  bool connected_ = false;
};

struct Response {
  int status = 0;
  std::string head;  // status line and headers
  std::string body;
  std::string Header(const std::string& name) const {
    const size_t at = head.find("\r\n" + name + ": ");
    if (at == std::string::npos) return "";
    const size_t start = at + name.size() + 4;
    return head.substr(start, head.find("\r\n", start) - start);
  }
};

Response ParseResponse(const std::string& raw) {
  Response r;
  const size_t end = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.1 ", 0) != 0 || end == std::string::npos) return r;
  r.status = std::stoi(raw.substr(9, 3));
  r.head = raw.substr(0, end);
  r.body = raw.substr(end + 4);
  return r;
}

Response Exchange(int port, const std::string& raw_request) {
  Client c(port);
  EXPECT_TRUE(c.connected());
  EXPECT_TRUE(c.Send(raw_request));
  return ParseResponse(c.ReadAll());
}

Response Get(int port, const std::string& path) {
  return Exchange(port, "GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n");
}

ChiefMetrics Metrics() {
  ChiefMetrics m;
  m.global_step = 42;
  m.loss = 1.25;
  m.model = "mnist";
  m.mode = "async";
  m.tasks = {{"ps:0", "running", ""}, {"worker:0", "dead", "no heartbeat"}};
  m.loss_history = {{10, 2.0}, {20, 1.25}};
  return m;
}

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    board_.Publish(Metrics());
    StatusOr<std::unique_ptr<HttpServer>> s = HttpServer::Start("127.0.0.1", 0, &board_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(s).value();
    ASSERT_GT(server_->port(), 0);
  }

  MetricsBoard board_;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(HttpServerTest, Healthz) {
  Response r = Get(server_->port(), "/healthz");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ok\n");
  EXPECT_EQ(r.Header("Content-Type"), "text/plain; charset=utf-8");
  EXPECT_EQ(r.Header("Content-Length"), "3");
  EXPECT_EQ(r.Header("Connection"), "close");
}

TEST_F(HttpServerTest, MetricsInPrometheusFormat) {
  Response r = Get(server_->port(), "/metrics");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.Header("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(r.body.find("\npstrain_global_step 42\n"), std::string::npos);
  EXPECT_NE(r.body.find("\npstrain_task_up{task=\"worker:0\",state=\"dead\"} 0\n"),
            std::string::npos);
}

TEST_F(HttpServerTest, StatusAsJsonFollowsThePublishedSnapshot) {
  Response r = Get(server_->port(), "/status?pretty=0");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.Header("Content-Type"), "application/json");
  nlohmann::json j = nlohmann::json::parse(r.body);
  EXPECT_EQ(j["global_step"], 42);
  EXPECT_EQ(j["tasks"].size(), 2u);

  ChiefMetrics m = Metrics();
  m.global_step = 43;
  board_.Publish(m);
  EXPECT_EQ(nlohmann::json::parse(Get(server_->port(), "/status").body)["global_step"], 43);
}

TEST_F(HttpServerTest, StatusPage) {
  Response r = Get(server_->port(), "/");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.Header("Content-Type"), "text/html; charset=utf-8");
  EXPECT_EQ(r.Header("Content-Length"), std::to_string(r.body.size()));
  EXPECT_NE(r.body.find("worker:0"), std::string::npos);
}

TEST_F(HttpServerTest, UnknownPathIs404) {
  EXPECT_EQ(Get(server_->port(), "/nope").status, 404);
  EXPECT_EQ(Get(server_->port(), "/metrics/").status, 404);
}

TEST_F(HttpServerTest, OtherMethodsAre405) {
  for (const char* method : {"POST", "PUT", "DELETE", "HEAD"}) {
    Response r =
        Exchange(server_->port(),
                 std::string(method) + " /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello");
    EXPECT_EQ(r.status, 405) << method;
    EXPECT_EQ(r.Header("Allow"), "GET") << method;
  }
}

TEST_F(HttpServerTest, MalformedRequestsAre400AndTheServerCarriesOn) {
  const char* kCases[] = {
      "garbage\r\n\r\n",
      "GET /\r\n\r\n",
      "GET / HTTP/9.9\r\n\r\n",
      "GET / HTTP/1.1\r\nbroken header\r\n\r\n",
      "\r\n\r\n",
      "GET /\x01 HTTP/1.1\r\n\r\n",
  };
  for (const char* request : kCases) {
    EXPECT_EQ(Exchange(server_->port(), request).status, 400) << request;
  }
  // A head cut short by the client closing its side.
  Client c(server_->port());
  ASSERT_TRUE(c.Send("GET /heal"));
  c.ShutdownWrite();
  EXPECT_EQ(ParseResponse(c.ReadAll()).status, 400);

  EXPECT_EQ(Get(server_->port(), "/healthz").status, 200);
}

TEST_F(HttpServerTest, OversizedRequestIs431) {
  const std::string huge =
      "GET / HTTP/1.1\r\nX-Big: " + std::string(HttpServer::kMaxRequestBytes, 'a') + "\r\n\r\n";
  EXPECT_EQ(Exchange(server_->port(), huge).status, 431);
  EXPECT_EQ(Get(server_->port(), "/healthz").status, 200);
}

TEST_F(HttpServerTest, SilentConnectionIsClosedWithoutAnswer) {
  Client c(server_->port());
  ASSERT_TRUE(c.connected());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(c.ReadAll(), "");  // returns when the server gives up
  EXPECT_GE(std::chrono::steady_clock::now() - start,
            HttpServer::kRequestTimeout - std::chrono::milliseconds(100));
}

TEST_F(HttpServerTest, ConcurrentRequestsFromSeveralThreads) {
  constexpr int kThreads = 8;
  constexpr int kRequestsEach = 25;
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const char* paths[] = {"/healthz", "/metrics", "/status", "/"};
      for (int i = 0; i < kRequestsEach; ++i) {
        if (Get(server_->port(), paths[(t + i) % 4]).status == 200) ++ok;
      }
    });
  }
  // The board changes under the readers.
  for (int i = 0; i < 50; ++i) {
    ChiefMetrics m = Metrics();
    m.global_step = i;
    board_.Publish(m);
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(ok.load(), kThreads * kRequestsEach);
}

TEST_F(HttpServerTest, StopIsIdempotentAndClosesThePort) {
  const int port = server_->port();
  server_->Stop();
  server_->Stop();
  EXPECT_FALSE(Client(port).connected());
  server_.reset();  // the destructor stops once more
}

TEST_F(HttpServerTest, StopDoesNotWaitLongForIdleConnections) {
  Client idle(server_->port());
  ASSERT_TRUE(idle.connected());
  EXPECT_EQ(Get(server_->port(), "/healthz").status, 200);  // the idle one has been accepted
  const auto start = std::chrono::steady_clock::now();
  server_->Stop();
  // It did not wait out the idle connection's request timeout.
  EXPECT_LT(std::chrono::steady_clock::now() - start, HttpServer::kRequestTimeout);
  EXPECT_EQ(idle.ReadAll(), "");  // closed without an answer
}

// Four threads stop the server at once (a signal and the end of training
// can race): none blocks or crashes, and the server is stopped for good: its
// port refuses connections and can be bound again.
TEST_F(HttpServerTest, ConcurrentStopsAreSafe) {
  const int port = server_->port();
  ASSERT_TRUE(Client(port).connected());
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([this] { server_->Stop(); });
  for (std::thread& t : threads) t.join();
  EXPECT_FALSE(Client(port).connected());
  StatusOr<std::unique_ptr<HttpServer>> again = HttpServer::Start("127.0.0.1", port, &board_);
  EXPECT_TRUE(again.ok()) << again.status().ToString();
}

TEST(HttpServerStart, BusyPortIsUnavailable) {
  MetricsBoard board;
  StatusOr<std::unique_ptr<HttpServer>> first = HttpServer::Start("127.0.0.1", 0, &board);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  StatusOr<std::unique_ptr<HttpServer>> second =
      HttpServer::Start("127.0.0.1", (*first)->port(), &board);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Code::kUnavailable);
}

TEST(HttpServerStart, BadPortIsInvalidArgument) {
  MetricsBoard board;
  for (int port : {-1, 65536}) {
    StatusOr<std::unique_ptr<HttpServer>> s = HttpServer::Start("127.0.0.1", port, &board);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), Code::kInvalidArgument);
  }
}

}  // namespace
}  // namespace pstrain
