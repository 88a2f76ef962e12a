#include "chief/http/http_message.h"

#include <gtest/gtest.h>

namespace pstrain {
namespace {

TEST(ParseRequestHead, AcceptsGetWithHeadersAndQuery) {
  StatusOr<HttpRequest> r =
      ParseRequestHead("GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\nAccept: */*\r\n\r\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->method, "GET");
  EXPECT_EQ(r->target, "/metrics?x=1");
  EXPECT_EQ(r->path, "/metrics");
  EXPECT_EQ(r->version, "HTTP/1.1");
}

TEST(ParseRequestHead, AcceptsHttp10WithoutHeaders) {
  StatusOr<HttpRequest> r = ParseRequestHead("POST / HTTP/1.0\r\n\r\n");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->method, "POST");
  EXPECT_EQ(r->path, "/");
}

TEST(ParseRequestHead, RejectsMalformedHeads) {
  const char* kCases[] = {
      "",
      "GET / HTTP/1.1",                      // no CRLF
      "GET / HTTP/1.1\r\n",                  // no blank line
      "GET /\r\n\r\n",                       // two parts
      "GET  / HTTP/1.1\r\n\r\n",             // empty target
      "GET / HTTP/1.1 extra\r\n\r\n",        // four parts
      "G(T / HTTP/1.1\r\n\r\n",              // bad method
      "GET metrics HTTP/1.1\r\n\r\n",        // not origin-form
      "GET http://x/ HTTP/1.1\r\n\r\n",      // absolute-form
      "GET / HTTP/2\r\n\r\n",                // version
      "GET / HTTP/1.1\r\nno colon\r\n\r\n",  // header line
      "GET / HTTP/1.1\r\n: empty\r\n\r\n",   // header name
      "GET /\x01 HTTP/1.1\r\n\r\n",          // control character
  };
  for (const char* head : kCases) {
    StatusOr<HttpRequest> r = ParseRequestHead(head);
    ASSERT_FALSE(r.ok()) << head;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << head;
  }
}

TEST(SerializeResponse, WritesStatusLineHeadersAndBody) {
  HttpResponse r = TextResponse(405, "no");
  r.headers.emplace_back("Allow", "GET");
  EXPECT_EQ(SerializeResponse(r),
            "HTTP/1.1 405 Method Not Allowed\r\n"
            "Content-Type: text/plain; charset=utf-8\r\n"
            "Content-Length: 3\r\n"
            "Cache-Control: no-store\r\n"
            "Connection: close\r\n"
            "Allow: GET\r\n"
            "\r\n"
            "no\n");
}

}  // namespace
}  // namespace pstrain
