#include "chief/http/http_server.h"

#include <exception>
#include <string>
#include <type_traits>
#include <utility>

#include <glog/logging.h>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include "chief/http/http_message.h"
#include "chief/http/status_routes.h"

namespace pstrain {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = boost::asio::ssl;
using boost::asio::ip::tcp;
using boost::system::error_code;

constexpr std::chrono::milliseconds kLingerTimeout{500};
constexpr std::chrono::milliseconds kAcceptRetryDelay{100};

using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// One connection: (a TLS handshake,) read a request, answer it, close. Lives
// as long as one of its handlers is pending (each holds a shared_ptr); every
// handler runs on the server's thread, so the members need no lock.
template <typename Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  // peer: "address:port", for logs; context: the TLS context, for TLS.
  template <typename... Context>
  Session(tcp::socket socket, std::string peer, const MetricsBoard* board, Context&... context)
      : peer_(std::move(peer)), stream_(std::move(socket), context...), board_(board) {}

  void Start() {
    Lowest().expires_after(HttpServer::kRequestTimeout);
    if constexpr (kTls) {
      stream_.async_handshake(ssl::stream_base::server,
                              [self = this->shared_from_this()](const error_code& ec) {
                                if (ec) {
                                  LOG(WARNING) << "https: refused a connection from " << self->peer_
                                               << ": " << ec.message();
                                  self->Close();
                                } else {
                                  self->Read();
                                }
                              });
    } else {
      Read();
    }
  }

 private:
  beast::tcp_stream& Lowest() { return beast::get_lowest_layer(stream_); }

  void Read() {
    parser_.header_limit(HttpServer::kMaxRequestBytes);
    parser_.body_limit(HttpServer::kMaxRequestBytes);
    http::async_read(
        stream_, buffer_, parser_,
        [self = this->shared_from_this()](const error_code& ec, size_t) { self->OnRead(ec); });
  }

  void OnRead(const error_code& ec) {
    if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
      Respond(TextResponse(
          431, "request head over " + std::to_string(HttpServer::kMaxRequestBytes) + " bytes"));
    } else if (ec == http::error::partial_message) {
      Respond(TextResponse(400, "connection closed inside the request"));
    } else if (ec &&
               ec.category() == http::make_error_code(http::error::end_of_stream).category() &&
               ec != http::error::end_of_stream) {
      Respond(TextResponse(400, "bad request: " + ec.message()));  // Beast's parser refused it
    } else if (ec) {
      Close();  // timed out, reset, or closed before saying anything
    } else {
      StatusOr<HttpRequest> request = FromBeast(parser_.get());
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
    response_ = ToBeast(response);
    Lowest().expires_after(HttpServer::kRequestTimeout);
    http::async_write(stream_, response_,
                      [self = this->shared_from_this()](const error_code& ec, size_t) {
                        if (ec) {
                          self->Close();
                        } else {
                          self->Finish();
                        }
                      });
  }

  // After the response: TLS says close_notify; plain TCP stops sending and
  // reads until the client closes (or kLingerTimeout), so request bytes left
  // unread do not turn the close into a reset that could destroy the
  // response before the client reads it.
  void Finish() {
    Lowest().expires_after(kLingerTimeout);
    if constexpr (kTls) {
      stream_.async_shutdown(
          [self = this->shared_from_this()](const error_code&) { self->Close(); });
    } else {
      error_code ignored;
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
      Discard();
    }
  }

  void Discard() {
    stream_.async_read_some(boost::asio::buffer(discard_),
                            [self = this->shared_from_this()](const error_code& ec, size_t) {
                              if (ec) {
                                self->Close();
                              } else {
                                self->Discard();
                              }
                            });
  }

  void Close() {
    error_code ignored;
    Lowest().socket().close(ignored);
  }

  const std::string peer_;
  Stream stream_;
  beast::flat_buffer buffer_{HttpServer::kMaxRequestBytes};
  http::request_parser<http::string_body> parser_;
  BeastResponse response_;
  char discard_[1024];
  const MetricsBoard* const board_;
};

// The TLS context of the endpoint: the task's certificate, client
// certificates checked against the CA when presented.
StatusOr<std::unique_ptr<ssl::context>> SslContext(const TlsFiles& tls) {
  auto ctx = std::make_unique<ssl::context>(ssl::context::tls_server);
  error_code ec;
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1,
                   ec);
  if (!ec) ctx->use_certificate_chain(boost::asio::buffer(tls.cert_pem), ec);
  if (!ec) ctx->use_private_key(boost::asio::buffer(tls.key_pem), ssl::context::pem, ec);
  if (!ec) ctx->add_certificate_authority(boost::asio::buffer(tls.ca_pem), ec);
  if (!ec) ctx->set_verify_mode(ssl::verify_peer, ec);
  if (ec) return InvalidArgument("https: " + ec.message());
  return ctx;
}

}  // namespace

StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const std::string& host, int port,
                                                        const MetricsBoard* board,
                                                        const TlsFiles* tls) {
  CHECK(board != nullptr);
  if (port < 0 || port > 65535)
    return InvalidArgument("http: port " + std::to_string(port) + " out of range");
  std::unique_ptr<HttpServer> server(new HttpServer(board));
  if (tls != nullptr) {
    PS_ASSIGN_OR_RETURN(server->ssl_, SslContext(*tls));
  }
  PS_RETURN_IF_ERROR(server->Listen(host, port));
  server->Accept();
  std::promise<void> done;
  server->thread_done_ = done.get_future();
  server->thread_ = std::thread(&HttpServer::Run, server.get(), std::move(done));
  LOG(INFO) << (tls != nullptr ? "https" : "http") << ": serving on "
            << (host.empty() ? "0.0.0.0" : host) << ":" << server->port_;
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
  const auto results = resolver.resolve(
      name, std::to_string(port), tcp::resolver::passive | tcp::resolver::numeric_service, ec);
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
    error_code ignored;
    const auto remote = socket.remote_endpoint(ignored);
    const std::string peer = remote.address().to_string() + ":" + std::to_string(remote.port());
    if (ssl_ != nullptr) {
      std::make_shared<Session<TlsStream>>(std::move(socket), peer, board_, *ssl_)->Start();
    } else {
      std::make_shared<Session<PlainStream>>(std::move(socket), peer, board_)->Start();
    }
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
  MutexLock lock(&stop_mu_);
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
