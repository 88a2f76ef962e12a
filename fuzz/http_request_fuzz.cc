// The head of an HTTP/1.1 request, as the chief's status endpoint parses it.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "chief/http/http_message.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)pstrain::ParseRequestHead(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
