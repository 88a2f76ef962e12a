#include "chief/http/http_server.h"

#include <array>
#include <exception>
#include <string>
#include <utility>

#include <boost/asio/buffer.hpp>
#include <boost/asio/buffers_iterator.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <glog/logging.h>

#include "chief/http/http_message.h"
#include "chief/http/status_routes.h"

namespace pstrain {
namespace {

using boost::asio::ip::tcp;
using boost::system::error_code;

constexpr std::chrono::milliseconds kLingerTimeout{500};
constexpr std::chrono::milliseconds kAcceptRetryDelay{100};

// One connection: read a request head, answer it, close. Lives as long as one
// of its handlers is pending (each holds a shared_ptr); every handler runs on
// the server's thread, so the members need no lock.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, const MetricsBoard* board)
      : socket_(std::move(socket)),
        deadline_(socket_.get_executor()),
        head_(HttpServer::kMaxRequestBytes),
        board_(board) {}

  void Start() {
    ArmDeadline(HttpServer::kRequestTimeout);
    boost::asio::async_read_until(
        socket_, head_, "\r\n\r\n",
        [self = shared_from_this()](const error_code& ec, size_t n) { self->OnHead(ec, n); });
  }

 private:
  void OnHead(const error_code& ec, size_t n) {
    if (ec == boost::asio::error::not_found) {  // the buffer filled before the blank line
      Respond(TextResponse(431, "request head over " + std::to_string(HttpServer::kMaxRequestBytes) +
                                    " bytes"));
    } else if (ec == boost::asio::error::eof && head_.size() > 0) {
      Respond(TextResponse(400, "connection closed inside the request head"));
    } else if (ec) {
      Close();  // timed out, reset, or closed before saying anything
    } else {
      const auto begin = boost::asio::buffers_begin(head_.data());
      const std::string head(begin, begin + n);
      StatusOr<HttpRequest> request = ParseRequestHead(head);
      if (!request.ok()) {
        Respond(TextResponse(400, "bad request: " + request.status().message()));
        return;
      }
      HttpResponse response = RouteStatusRequest(*request, *board_);
      VLOG(1) << "http: " << request->method << " " << request->target << " -> " << response.status;
      Respond(response);
    }
  }

  void Respond(const HttpResponse& response) {
    out_ = SerializeResponse(response);
    boost::asio::async_write(socket_, boost::asio::buffer(out_),
                             [self = shared_from_this()](const error_code& ec, size_t) {
                               if (ec) {
                                 self->Close();
                               } else {
                                 self->Linger();
                               }
                             });
  }

  // Stops sending and reads until the client closes (or kLingerTimeout), so
  // request bytes left unread do not turn the close into a reset that could
  // destroy the response before the client reads it.
  void Linger() {
    error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    ArmDeadline(kLingerTimeout);
    Discard();
  }

  void Discard() {
    socket_.async_read_some(boost::asio::buffer(discard_),
                            [self = shared_from_this()](const error_code& ec, size_t) {
                              if (ec) {
                                self->Close();
                              } else {
                                self->Discard();
                              }
                            });
  }

  // Closes the socket when `timeout` passes; replaces any earlier deadline.
  void ArmDeadline(std::chrono::steady_clock::duration timeout) {
    deadline_.expires_after(timeout);
    deadline_.async_wait([self = shared_from_this()](const error_code& ec) {
      if (!ec) self->Close();
    });
  }

  void Close() {
    error_code ignored;
    socket_.close(ignored);
    deadline_.cancel();
  }

  tcp::socket socket_;
  boost::asio::steady_timer deadline_;
  boost::asio::streambuf head_;
  std::string out_;
  std::array<char, 1024> discard_;
  const MetricsBoard* const board_;
};

}  // namespace

StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const std::string& host, int port,
                                                         const MetricsBoard* board) {
  CHECK(board != nullptr);
  if (port < 0 || port > 65535) return InvalidArgument("http: port " + std::to_string(port) + " out of range");
  std::unique_ptr<HttpServer> server(new HttpServer(board));
  PS_RETURN_IF_ERROR(server->Listen(host, port));
  server->Accept();
  std::promise<void> done;
  server->thread_done_ = done.get_future();
  server->thread_ = std::thread(&HttpServer::Run, server.get(), std::move(done));
  LOG(INFO) << "http: serving on " << (host.empty() ? "0.0.0.0" : host) << ":" << server->port_;
  return StatusOr<std::unique_ptr<HttpServer>>(std::move(server));
}

HttpServer::HttpServer(const MetricsBoard* board)
    : board_(board), io_(std::make_unique<boost::asio::io_context>()) {
  accept_retry_ = std::make_unique<boost::asio::steady_timer>(*io_);
}

HttpServer::~HttpServer() { Stop(); }

Status HttpServer::Listen(const std::string& host, int port) {
  const std::string name = host.empty() ? "0.0.0.0" : host;
  error_code ec;
  tcp::resolver resolver(*io_);
  const auto results = resolver.resolve(name, std::to_string(port),
                                        tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec) return Unavailable("http: cannot resolve " + name + ": " + ec.message());

  std::string error = "no address";
  for (const auto& entry : results) {
    const tcp::endpoint endpoint = entry.endpoint();
    auto acceptor = std::make_unique<tcp::acceptor>(*io_);
    acceptor->open(endpoint.protocol(), ec);
    if (!ec) acceptor->set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor->bind(endpoint, ec);
    if (!ec) acceptor->listen(boost::asio::socket_base::max_listen_connections, ec);
    if (!ec) port_ = acceptor->local_endpoint(ec).port();
    if (ec) {
      error = ec.message();
      continue;
    }
    acceptor_ = std::move(acceptor);
    return OkStatus();
  }
  return Unavailable("http: cannot listen on " + name + ":" + std::to_string(port) + ": " + error);
}

void HttpServer::Run(std::promise<void> done) {
  try {
    io_->run();
  } catch (const std::exception& e) {  // handlers report errors by code; this is the edge
    LOG(ERROR) << "http: server thread failed: " << e.what();
  }
  done.set_value();
}

void HttpServer::Accept() {
  acceptor_->async_accept([this](const error_code& ec, tcp::socket socket) {
    if (!acceptor_->is_open()) return;  // Stop closed it
    if (ec) {
      LOG(WARNING) << "http: accept failed: " << ec.message();
      RetryAcceptLater();
      return;
    }
    std::make_shared<Connection>(std::move(socket), board_)->Start();
    Accept();
  });
}

// Out of descriptors and the like: try again shortly instead of spinning.
void HttpServer::RetryAcceptLater() {
  accept_retry_->expires_after(kAcceptRetryDelay);
  accept_retry_->async_wait([this](const error_code& ec) {
    if (!ec && acceptor_->is_open()) Accept();
  });
}

void HttpServer::Stop() {
  std::lock_guard<std::mutex> lock(stop_mu_);
  if (stopped_) return;
  stopped_ = true;
  if (thread_.joinable()) {
    boost::asio::post(*io_, [this] {
      error_code ignored;
      acceptor_->close(ignored);
      accept_retry_->cancel();
    });
    // The thread ends by itself once every connection is done.
    if (thread_done_.wait_for(kDrainTimeout) != std::future_status::ready) io_->stop();
    thread_.join();
    LOG(INFO) << "http: stopped serving on port " << port_;
  }
  // Destroying the io_context destroys the connections it still holds.
  accept_retry_.reset();
  acceptor_.reset();
  io_.reset();
}

}  // namespace pstrain
