#include "chief/http/status_routes.h"

namespace pstrain {
namespace {

HttpResponse Ok(const char* content_type, std::string body) {
  HttpResponse r;
  r.content_type = content_type;
  r.body = std::move(body);
  return r;
}

}  // namespace

HttpResponse RouteStatusRequest(const HttpRequest& request, const MetricsBoard& board) {
  const std::string& path = request.path;
  const bool known = path == "/" || path == "/healthz" || path == "/metrics" || path == "/status";
  if (!known) return TextResponse(404, "not found: " + path);
  if (request.method != "GET") {
    HttpResponse r = TextResponse(405, "method not allowed: " + request.method);
    r.headers.emplace_back("Allow", "GET");
    return r;
  }
  if (path == "/healthz") return TextResponse(200, "ok");
  if (path == "/metrics")
    return Ok("text/plain; version=0.0.4; charset=utf-8", RenderPrometheus(board.Read()));
  if (path == "/status") return Ok("application/json", RenderStatusJson(board.Read()));
  return Ok("text/html; charset=utf-8", RenderStatusPage(board.Read()));
}

}  // namespace pstrain
