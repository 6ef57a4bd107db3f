// RequestHead: how `reins serve` reads a request's head with Beast and screens it
// (request_rules.h) before a byte of the body is read. The transport and the HTTP
// fuzz target share these, so the fuzzer drives the very parser settings and checks
// the server uses.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "server/request_rules.h"

namespace reins {

using RequestParser = boost::beast::http::request_parser<boost::beast::http::string_body>;
inline constexpr size_t kMaxRequestHeadBytes = 64 * 1024;

// Limits: the head to kMaxRequestHeadBytes, the body to `max_body_bytes`.
void ConfigureRequestParser(RequestParser& parser, size_t max_body_bytes);

// The head's fields as (name, value) pairs, names as sent: views into `head`.
std::vector<HeadField> HeadFields(const boost::beast::http::request_header<>& head);

// The canonical target of an acceptable head, or why it is refused (`why`).
std::optional<RequestTarget> ScreenRequestHead(const boost::beast::http::request_header<>& head,
                                               RequestRefusal* why);

}  // namespace reins
