// The monitoring endpoint's routes, independent of any socket:
//   GET /healthz   "ok"                    text/plain
//   GET /metrics   Prometheus text 0.0.4   text/plain; version=0.0.4
//   GET /status    JSON                    application/json
//   GET /          the status page         text/html
// 404 for any other path, 405 (with Allow: GET) for any other method.
//
// Thread-safe: reads `board` through MetricsBoard::Read.
#ifndef PSTRAIN_CHIEF_HTTP_STATUS_ROUTES_H_
#define PSTRAIN_CHIEF_HTTP_STATUS_ROUTES_H_

#include "chief/http/http_message.h"
#include "chief/http/metrics.h"

namespace pstrain {

HttpResponse RouteStatusRequest(const HttpRequest& request, const MetricsBoard& board);

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_HTTP_STATUS_ROUTES_H_
