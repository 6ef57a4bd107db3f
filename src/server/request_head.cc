#include "server/request_head.h"

namespace reins {

void ConfigureRequestParser(RequestParser& parser, size_t max_body_bytes) {
  parser.body_limit(max_body_bytes);
  parser.header_limit(kMaxRequestHeadBytes);
}

std::vector<HeadField> HeadFields(const boost::beast::http::request_header<>& head) {
  std::vector<HeadField> fields;
  for (const auto& field : head) fields.emplace_back(field.name_string(), field.value());
  return fields;
}

std::optional<RequestTarget> ScreenRequestHead(const boost::beast::http::request_header<>& head,
                                               RequestRefusal* why) {
  if (std::optional<RequestRefusal> framing = CheckFraming(head.version(), HeadFields(head))) {
    if (why != nullptr) *why = *framing;
    return std::nullopt;
  }
  return CanonicalTarget(head.target(), why);
}

}  // namespace reins
