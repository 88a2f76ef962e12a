// HttpServer: the chief's monitoring endpoint, an HTTP/1.1 server on
// Boost.Beast serving the routes of status_routes.h from a MetricsBoard, as
// HTTPS where the task has TLS material (core/tls.h). Over HTTPS a client
// certificate is checked against the CA when one is presented, but not
// required: Kubernetes' probes, Prometheus and browsers present none, and
// the endpoint only reads.
//
// One request per connection (Connection: close). A request head larger than
// kMaxRequestBytes is answered 431, a malformed one 400; a connection that
// has not sent a whole request (or finished its TLS handshake) within
// kRequestTimeout is closed without answer.
//
// Lifecycle: Start() binds, listens and starts one thread that runs every
// handler; Stop() (or the destructor) closes the listener, lets connections
// in flight finish for up to kDrainTimeout, then stops the thread.
//
// Thread-safety: port() may be called from any thread. Stop() may be called
// from any thread but the server's own, any number of times and concurrently.
// The board is only read, through MetricsBoard::Read.
#ifndef PSTRAIN_CHIEF_HTTP_HTTP_SERVER_H_
#define PSTRAIN_CHIEF_HTTP_HTTP_SERVER_H_

#include <chrono>
#include <cstddef>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "chief/http/metrics.h"
#include "core/mutex.h"
#include "core/status.h"
#include "core/tls.h"

namespace pstrain {

class HttpServer {
 public:
  static constexpr size_t kMaxRequestBytes = 8192;
  static constexpr std::chrono::seconds kRequestTimeout{5};
  static constexpr std::chrono::milliseconds kDrainTimeout{1000};

  // Listens on host:port ("" or "0.0.0.0": every IPv4 interface; port 0: a
  // free port, see port()) and serves `board`, which must outlive the server.
  // InvalidArgument for a port outside [0, 65535]; Unavailable when the host
  // does not resolve or the address cannot be bound. With `tls`, HTTPS
  // with its certificate (InvalidArgument when OpenSSL refuses it).
  static StatusOr<std::unique_ptr<HttpServer>> Start(const std::string& host, int port,
                                                     const MetricsBoard* board,
                                                     const TlsFiles* tls = nullptr);

  ~HttpServer();  // Stop()s
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The port it listens on (the one chosen when Start was given 0).
  int port() const { return port_; }
  bool https() const { return ssl_ != nullptr; }

  // Idempotent; returns once the server's thread has ended.
  void Stop();

 private:
  explicit HttpServer(const MetricsBoard* board);

  Status Listen(const std::string& host, int port);
  void Run(std::promise<void> done);  // the server's thread; sets done on return
  void Accept();
  void RetryAcceptLater();

  // Constant after Start.
  const MetricsBoard* const board_;
  int port_ = 0;
  std::unique_ptr<boost::asio::ssl::context> ssl_;  // null: plain HTTP
  std::unique_ptr<boost::asio::io_context> io_;
  std::unique_ptr<boost::asio::ip::tcp::acceptor> acceptor_;  // used on the server's thread only
  std::unique_ptr<boost::asio::steady_timer> accept_retry_;   // used on the server's thread only
  std::thread thread_;
  std::future<void> thread_done_;  // ready when Run returns

  Mutex stop_mu_;
  bool stopped_ ABSL_GUARDED_BY(stop_mu_) = false;
};

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_HTTP_HTTP_SERVER_H_
