#include "chief/http/http_message.h"

#include <cctype>

namespace pstrain {
namespace {

const char* ReasonPhrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    default: return "Unknown";
  }
}

// RFC 9110 tchar: the characters a method token may hold.
bool IsTokenChar(char c) {
  if (std::isalnum(static_cast<unsigned char>(c))) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsTokenChar(c)) return false;
  }
  return true;
}

// Origin-form: "/" then visible ASCII, no spaces or controls.
bool IsOriginForm(std::string_view s) {
  if (s.empty() || s[0] != '/') return false;
  for (char c : s) {
    if (c <= 0x20 || c >= 0x7f) return false;
  }
  return true;
}

}  // namespace

StatusOr<HttpRequest> ParseRequestHead(std::string_view head) {
  const size_t line_end = head.find("\r\n");
  if (line_end == std::string_view::npos) return InvalidArgument("request line does not end in CRLF");
  const std::string_view line = head.substr(0, line_end);

  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return InvalidArgument("request line is not METHOD SP TARGET SP VERSION");
  }
  HttpRequest request;
  request.method = std::string(line.substr(0, sp1));
  request.target = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
  request.version = std::string(line.substr(sp2 + 1));
  if (!IsToken(request.method)) return InvalidArgument("bad method");
  if (!IsOriginForm(request.target)) return InvalidArgument("target must be a path starting with /");
  if (request.version != "HTTP/1.1" && request.version != "HTTP/1.0") {
    return InvalidArgument("unsupported version " + request.version);
  }
  request.path = request.target.substr(0, request.target.find('?'));

  // Header lines up to the blank line; each must be "name: value".
  size_t pos = line_end + 2;
  while (true) {
    const size_t end = head.find("\r\n", pos);
    if (end == std::string_view::npos) return InvalidArgument("headers do not end in a blank line");
    if (end == pos) break;
    const std::string_view field = head.substr(pos, end - pos);
    const size_t colon = field.find(':');
    if (colon == std::string_view::npos || !IsToken(field.substr(0, colon))) {
      return InvalidArgument("malformed header line");
    }
    pos = end + 2;
  }
  return request;
}

std::string SerializeResponse(const HttpResponse& response) {
  std::string out = "HTTP/1.1 " + std::to_string(response.status) + " " + ReasonPhrase(response.status) +
                    "\r\nContent-Type: " + response.content_type +
                    "\r\nContent-Length: " + std::to_string(response.body.size()) +
                    "\r\nCache-Control: no-store\r\nConnection: close\r\n";
  for (const auto& [name, value] : response.headers) out += name + ": " + value + "\r\n";
  out += "\r\n";
  out += response.body;
  return out;
}

HttpResponse TextResponse(int status, const std::string& message) {
  HttpResponse r;
  r.status = status;
  r.content_type = "text/plain; charset=utf-8";
  r.body = message + "\n";
  return r;
}

}  // namespace pstrain
