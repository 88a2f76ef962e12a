// The endpoint as HTTPS: the routes over TLS with the task's certificate,
// client certificates checked when presented, plain HTTP and strangers
// refused, the server serving on.
#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>

#include <string>

#include "chief/http/http_server.h"
#include "core/testing/status_assertions.h"
#include "core/tls_certs.h"

namespace pstrain {
namespace {

namespace ssl = boost::asio::ssl;
using boost::asio::ip::tcp;

// GET `path` over TLS, trusting `ca`, presenting `cert` when set: the
// response's status, or -1 when the handshake fails.
int HttpsGet(int port, const std::string& ca, const CertAndKey* cert, const std::string& path) {
  boost::asio::io_context io;
  ssl::context ctx(ssl::context::tls_client);
  ctx.add_certificate_authority(boost::asio::buffer(ca));
  ctx.set_verify_mode(ssl::verify_peer);
  if (cert != nullptr) {
    ctx.use_certificate_chain(boost::asio::buffer(cert->cert_pem));
    ctx.use_private_key(boost::asio::buffer(cert->key_pem), ssl::context::pem);
  }
  ssl::stream<tcp::socket> stream(io, ctx);
  boost::system::error_code ec;
  stream.next_layer().connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port), ec);
  if (ec) return -2;
  stream.handshake(ssl::stream_base::client, ec);
  if (ec) return -1;
  const std::string request = "GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n";
  boost::asio::write(stream, boost::asio::buffer(request), ec);
  std::string response;
  char buf[4096];
  for (;;) {
    const size_t n = stream.read_some(boost::asio::buffer(buf), ec);
    response.append(buf, n);
    if (ec) break;
  }
  if (response.rfind("HTTP/1.1 ", 0) != 0) return -1;  // TLS 1.3: refused after the handshake
  return std::stoi(response.substr(9, 3));
}

class HttpsServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ca = MakeCa("test CA");
    auto chief = MakeCert(*ca, {"chief:0", {"127.0.0.1"}});
    ASSERT_TRUE(ca.ok() && chief.ok());
    ca_ = *ca;
    TlsFiles files{chief->cert_pem, chief->key_pem, ca_.cert_pem, ""};
    board_.Publish(ChiefMetrics());
    auto s = HttpServer::Start("127.0.0.1", 0, &board_, &files);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(s).value();
    EXPECT_TRUE(server_->https());
  }
  CertAndKey ca_;
  MetricsBoard board_;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(HttpsServerTest, ServesTheRoutesWithOrWithoutAClientCertificate) {
  EXPECT_EQ(HttpsGet(server_->port(), ca_.cert_pem, nullptr, "/healthz"), 200);
  EXPECT_EQ(HttpsGet(server_->port(), ca_.cert_pem, nullptr, "/nope"), 404);
  auto worker = MakeCert(ca_, {"worker:0", {"127.0.0.1"}});
  PS_ASSERT_OK(worker);
  EXPECT_EQ(HttpsGet(server_->port(), ca_.cert_pem, &*worker, "/metrics"), 200);
}

TEST_F(HttpsServerTest, RefusesAnotherCasCertificateAndPlainHttpAndServesOn) {
  auto other = MakeCa("another CA");
  PS_ASSERT_OK(other);
  auto stranger = MakeCert(*other, {"stranger", {"127.0.0.1"}});
  PS_ASSERT_OK(stranger);
  EXPECT_EQ(HttpsGet(server_->port(), ca_.cert_pem, &*stranger, "/healthz"), -1);
  // A client that does not trust the server's CA gives up itself.
  EXPECT_EQ(HttpsGet(server_->port(), other->cert_pem, nullptr, "/healthz"), -1);

  boost::asio::io_context io;
  tcp::socket plain(io);
  plain.connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), server_->port()));
  const std::string request = "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n";
  boost::asio::write(plain, boost::asio::buffer(request));
  boost::system::error_code ec;
  std::string response(256, '\0');
  const size_t n = boost::asio::read(plain, boost::asio::buffer(response), ec);
  EXPECT_EQ(response.substr(0, n).find("HTTP/1.1 200"), std::string::npos);

  EXPECT_EQ(HttpsGet(server_->port(), ca_.cert_pem, nullptr, "/healthz"), 200);
}

}  // namespace
}  // namespace pstrain
