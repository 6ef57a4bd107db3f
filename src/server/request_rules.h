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
  std::string code;     // bad_request | not_implemented | cross_origin | host_not_allowed | unsupported_media_type
  std::string message;  // a plain sentence
};

struct RequestTarget {
  std::string path;   // canonical, starts with '/'
  std::string query;  // after '?', undecoded ("" when none)
};

// Splits and checks an origin-form request target ("/v1/sessions?x=1").
std::optional<RequestTarget> CanonicalTarget(std::string_view target, RequestRefusal* why);

// Checks the request line's version and the header fields (names in any case), read
// where they are (views into the parsed head). A field that must be single (Host,
// Authorization, Content-Length, Content-Type, Origin, Idempotency-Key, X-Reins-Session)
// sent twice is refused: "bogus key, then a valid one" must not pick either.
using HeadField = std::pair<std::string_view, std::string_view>;
std::optional<RequestRefusal> CheckFraming(unsigned version, const std::vector<HeadField>& fields);

// Who may call from a browser (docs/security.md, "Browsers"). A page of another origin
// (its `Origin` header neither the request's own Host nor one of `allowed_origins`) is
// refused: it would act with the person's network position and, without keys, with
// no credential at all (CSRF). Without keys only loopback Host names (localhost,
// 127.0.0.1, [::1]) and `allowed_hosts` are answered: a name an attacker's DNS points at
// 127.0.0.1 is not (DNS rebinding).
struct BrowserRules {
  bool keys = false;
  std::vector<std::string> allowed_origins;  // "https://app.example.com", exactly
  std::vector<std::string> allowed_hosts;    // host names, without the port
};
std::optional<RequestRefusal> CheckBrowser(std::string_view host, std::string_view origin, const BrowserRules& rules);
// Without keys, a request with a body must say Content-Type: application/json (415
// otherwise): a page of another site can POST a form or text/plain to loopback without
// asking, but not JSON, which needs the CORS preflight this server never grants.
std::optional<RequestRefusal> CheckBodyType(std::string_view content_type, bool has_body, bool keys);

// The value of `name` in a query string ("after=3&limit=10"), percent-decoded; nullopt
// when absent.
std::optional<std::string> QueryParam(std::string_view query, std::string_view name);

}  // namespace reins
