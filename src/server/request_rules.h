// RequestRules: what `reins serve` accepts as an HTTP request before anything else
// looks at it. Pure functions, so that the transport, the fuzz targets and the tests
// run the very same checks.
//
// One canonical path: authentication and routing both read the path this returns, and
// a target that could mean two paths (`//`, `/./`, `/../`, percent-encoded `/`, `\`
// or `.`) is refused rather than normalised, so no check can look at one form while
// the router acts on another.
//
// Framing (RFC 9112): a Transfer-Encoding whose last coding is not `chunked` makes the
// body length unknowable (400, connection closed); a coding reins cannot decode is 501;
// Transfer-Encoding together with Content-Length is refused (a smuggling vector);
// HTTP/1.1 without Host is 400.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace reins {

struct RequestRefusal {
  int status = 400;
  std::string code;     // bad_request | not_implemented
  std::string message;  // a plain sentence
};

struct RequestTarget {
  std::string path;   // canonical, starts with '/'
  std::string query;  // after '?', undecoded ("" when none)
};

// Splits and checks an origin-form request target ("/v1/sessions?x=1").
std::optional<RequestTarget> CanonicalTarget(std::string_view target, RequestRefusal* why);

// Checks the request line's version and the header fields (names in any case), read
// where they are (views into the parsed head).
using HeadField = std::pair<std::string_view, std::string_view>;
std::optional<RequestRefusal> CheckFraming(unsigned version, const std::vector<HeadField>& fields);

// The value of `name` in a query string ("after=3&limit=10"), percent-decoded; nullopt
// when absent.
std::optional<std::string> QueryParam(std::string_view query, std::string_view name);

}  // namespace reins
