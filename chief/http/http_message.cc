#include "chief/http/http_message.h"

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/write.hpp>

#include <sstream>

namespace pstrain {

namespace http = boost::beast::http;

StatusOr<HttpRequest> FromBeast(const BeastRequest& request) {
  HttpRequest r;
  r.method = std::string(request.method_string());
  r.target = std::string(request.target());
  if (r.target.empty() || r.target[0] != '/') {
    return InvalidArgument("target must be a path starting with /");
  }
  if (request.version() != 10 && request.version() != 11) {
    return InvalidArgument("unsupported version HTTP/" + std::to_string(request.version() / 10) +
                           "." + std::to_string(request.version() % 10));
  }
  r.version = request.version() == 10 ? "HTTP/1.0" : "HTTP/1.1";
  r.path = r.target.substr(0, r.target.find('?'));
  return r;
}

StatusOr<HttpRequest> ParseRequestHead(std::string_view head) {
  http::request_parser<http::string_body> parser;
  parser.eager(false);  // the head alone
  boost::beast::error_code ec;
  size_t used = 0;
  while (!ec && used < head.size() && !parser.is_header_done()) {
    const size_t n = parser.put(boost::asio::buffer(head.data() + used, head.size() - used), ec);
    if (n == 0 && !ec) break;
    used += n;
  }
  if (ec && ec != http::error::need_more) return InvalidArgument(ec.message());
  if (!parser.is_header_done()) return InvalidArgument("the head does not end in a blank line");
  return FromBeast(parser.get());
}

BeastResponse ToBeast(const HttpResponse& response) {
  BeastResponse r{static_cast<http::status>(response.status), 11};
  r.set(http::field::content_type, response.content_type);
  r.content_length(response.body.size());
  r.set(http::field::cache_control, "no-store");
  r.set(http::field::connection, "close");
  for (const auto& [name, value] : response.headers) r.insert(name, value);
  r.body() = response.body;
  return r;
}

std::string SerializeResponse(const HttpResponse& response) {
  std::ostringstream out;
  out << ToBeast(response);
  return out.str();
}

HttpResponse TextResponse(int status, const std::string& message) {
  HttpResponse r;
  r.status = status;
  r.content_type = "text/plain; charset=utf-8";
  r.body = message + "\n";
  return r;
}

}  // namespace pstrain
