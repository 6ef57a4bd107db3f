#include "server/connection_response.h"

#include <boost/beast/http.hpp>

#include "reins/json.h"

namespace reins::served {

namespace http = beast::http;

std::string ErrorBody(const std::string& code, const std::string& message) {
  Json body = {{"error", {{"code", code}, {"message", message}}}};
  return body.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string TooLarge(size_t limit) {
  return ErrorBody("body_too_large", "the request body is larger than " + std::to_string(limit) + " bytes");
}
std::string Malformed(const std::string& why) { return ErrorBody("bad_request", "malformed HTTP request: " + why); }
std::string NoResponse() { return ErrorBody("internal", "the handler wrote no response"); }
std::string Refused(const RequestRefusal& r) { return ErrorBody(r.code, r.message); }
std::string HeadTooLarge() {
  return ErrorBody("headers_too_large", "the request head is larger than " + std::to_string(kMaxRequestHeadBytes >> 10) + " KiB");
}
std::string BusyResponse() {
  std::string body = ErrorBody("overloaded", "the server has too many open connections; retry shortly");
  return "HTTP/1.1 503 Service Unavailable\r\nServer: reins\r\nContent-Type: application/json\r\n"
         "Retry-After: 1\r\nConnection: close\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

// The status line and header fields of a whole response, as they go on the wire. Written
// here rather than by Beast's serializer, whose buffer sequences cost about 17 k
// instructions per message (with the client's requests, 9 % of a served turn:
// docs/PERFORMANCE.md, round 7). A field with a line break in it (none has: the values
// are the server's own) is left out rather than split.
std::string ResponseHead(int status, std::string_view content_type, const std::map<std::string, std::string>& headers,
                         bool keep_alive, size_t body_bytes) {
  auto one_line = [](std::string_view s) { return s.find_first_of("\r\n") == std::string_view::npos; };
  std::string head;
  head.reserve(160);
  head += "HTTP/1.1 ";
  head += std::to_string(status);
  head += ' ';
  head += std::string_view(http::obsolete_reason(static_cast<http::status>(status)));
  head += "\r\nServer: reins\r\n";
  if (!content_type.empty() && one_line(content_type)) {
    head += "Content-Type: ";
    head += content_type;
    head += "\r\n";
  }
  for (const auto& [name, value] : headers) {
    if (!one_line(name) || !one_line(value)) continue;
    head += name;
    head += ": ";
    head += value;
    head += "\r\n";
  }
  if (!keep_alive) head += "Connection: close\r\n";
  // No length on a 1xx, 204 or 304 (RFC 9110 8.6), as Beast's prepare_payload did.
  if (status >= 200 && status != 204 && status != 304) {
    head += "Content-Length: ";
    head += std::to_string(body_bytes);
    head += "\r\n";
  }
  head += "\r\n";
  return head;
}

}  // namespace reins::served
