// The small part of HTTP/1.1 the monitoring endpoint speaks: parse a
// request's head (request line and headers), serialize a response that closes
// the connection. Pure functions; thread-safe.
#ifndef PSTRAIN_CHIEF_HTTP_HTTP_MESSAGE_H_
#define PSTRAIN_CHIEF_HTTP_HTTP_MESSAGE_H_

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

// Parses `head`: the bytes up to and including the blank line that ends the
// headers. Header fields are checked for form and otherwise ignored.
// InvalidArgument, naming the fault, for anything malformed: a request line
// that is not "METHOD SP origin-form SP HTTP/1.x", a header line without ':'.
StatusOr<HttpRequest> ParseRequestHead(std::string_view head);

// "HTTP/1.1 <status> <reason>" with Content-Type, Content-Length,
// Cache-Control: no-store, Connection: close, then `headers`, then the body.
std::string SerializeResponse(const HttpResponse& response);

// A text/plain response whose body is `message` and a newline.
HttpResponse TextResponse(int status, const std::string& message);

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_HTTP_HTTP_MESSAGE_H_
