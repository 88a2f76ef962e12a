// The part of HTTP/1.1 the monitoring endpoint speaks, on Boost.Beast's
// parser and serializer: a request's head checked and reduced to what the
// routes need, and a response that closes the connection. Thread-safe.
#ifndef PSTRAIN_CHIEF_HTTP_HTTP_MESSAGE_H_
#define PSTRAIN_CHIEF_HTTP_HTTP_MESSAGE_H_

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace pstrain {

struct HttpRequest {
  std::string method;   // "GET"
  std::string target;   // "/metrics?x=1", as sent
  std::string path;     // "/metrics": the target without its query
  std::string version;  // "HTTP/1.1"
};

struct HttpResponse {
  int status = 200;
  std::string content_type;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // beyond the standard ones
};

using BeastRequest = boost::beast::http::request<boost::beast::http::string_body>;
using BeastResponse = boost::beast::http::response<boost::beast::http::string_body>;

// What the routes see of a request Beast parsed. InvalidArgument for what
// Beast lets through but the endpoint does not serve: a target that is not
// origin-form ("/path"), a version other than HTTP/1.0 and 1.1.
StatusOr<HttpRequest> FromBeast(const BeastRequest& request);

// Parses `head` (the request line and headers, up to and including the
// blank line) with Beast's parser, then FromBeast. InvalidArgument naming
// the fault for anything malformed or incomplete. The fuzz target's entry.
StatusOr<HttpRequest> ParseRequestHead(std::string_view head);

// The response as Beast sends it: "HTTP/1.1 <status> <reason>" with
// Content-Type, Content-Length, Cache-Control: no-store, Connection: close,
// then `headers`, then the body.
BeastResponse ToBeast(const HttpResponse& response);
// The same as bytes.
std::string SerializeResponse(const HttpResponse& response);

// A text/plain response whose body is `message` and a newline.
HttpResponse TextResponse(int status, const std::string& message);

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_HTTP_HTTP_MESSAGE_H_
