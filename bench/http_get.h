// HttpGet: one GET over plain HTTP/1.1 to a task's HTTP endpoint (the
// chief's /status, /metrics), for the benchmarks that time them; and a
// port for that endpoint.
#ifndef PSTRAIN_BENCH_HTTP_GET_H_
#define PSTRAIN_BENCH_HTTP_GET_H_

#include <chrono>
#include <string>

#include "core/status.h"

namespace pstrain {
namespace bench {

// The body of a 200 answer to GET `path` from host:port (an IPv4 address),
// read to the end (the request asks the server to close); an error naming
// what failed otherwise, or once `timeout` has passed.
StatusOr<std::string> HttpGet(const std::string& host, int port, const std::string& path,
                              std::chrono::milliseconds timeout);

// A TCP port of `host` free at this moment (bound and let go): for a task
// whose server binds its port alone, which a benchmark cannot hold for it.
StatusOr<int> FreePortNow(const std::string& host);

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_HTTP_GET_H_
