#include "server/request_rules.h"

#include <algorithm>
#include <cctype>
#include <iterator>

#include "domain/text.h"

namespace reins {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<RequestTarget> Refuse(RequestRefusal* why, std::string message) {
  if (why != nullptr) *why = {400, "bad_request", std::move(message)};
  return std::nullopt;
}

}  // namespace

std::optional<RequestTarget> CanonicalTarget(std::string_view target, RequestRefusal* why) {
  if (target.empty() || target.front() != '/') {
    return Refuse(why, "the request target must be a path starting with '/'");
  }
  const size_t q = target.find('?');
  std::string_view path = target.substr(0, q);
  for (size_t i = 0; i < path.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(path[i]);
    if (c < 0x21 || c == 0x7f || c == '\\') return Refuse(why, "the path holds a control character, a space or '\\'");
    if (c != '%') continue;
    const int hi = i + 2 < path.size() ? HexValue(path[i + 1]) : -1;
    const int lo = hi >= 0 ? HexValue(path[i + 2]) : -1;
    if (lo < 0) return Refuse(why, "the path holds a '%' that is not a percent-encoded byte");
    const int byte = hi * 16 + lo;
    if (byte == '/' || byte == '\\' || byte == '.' || byte < 0x20) {
      return Refuse(why, "the path percent-encodes '/', '\\', '.' or a control character; send it plainly");
    }
  }
  // Segments: none empty (except after a final '/'), none "." or "..".
  for (size_t start = 1; start <= path.size();) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view segment = path.substr(start, end - start);
    if (segment.empty() && end != path.size()) return Refuse(why, "the path holds '//'; send each '/' once");
    if (segment == "." || segment == "..") return Refuse(why, "the path holds a '.' or '..' segment");
    start = end + 1;
  }
  RequestTarget out;
  out.path = std::string(path);
  if (q != std::string_view::npos) out.query = std::string(target.substr(q + 1));
  return out;
}

std::optional<RequestRefusal> CheckFraming(unsigned version, const std::vector<HeadField>& fields) {
  bool has_host = false, has_length = false;
  std::vector<std::string> codings;
  static constexpr std::string_view kSingle[] = {"host",   "authorization",   "content-length", "content-type",
                                                 "origin", "idempotency-key", "x-reins-session"};
  int seen[std::size(kSingle)] = {};
  for (const auto& [name, value] : fields) {
    for (size_t i = 0; i < std::size(kSingle); ++i) {
      if (EqualsNoCase(name, kSingle[i]) && ++seen[i] > 1) {
        return RequestRefusal{400, "bad_request", "send the " + std::string(name) + " header once"};
      }
    }
    if (EqualsNoCase(name, "host")) has_host = true;
    if (EqualsNoCase(name, "content-length")) has_length = true;
    if (!EqualsNoCase(name, "transfer-encoding")) continue;
    std::string_view rest = value;
    while (true) {
      size_t comma = rest.find(',');
      std::string_view coding = Trim(rest.substr(0, comma));
      if (!coding.empty()) codings.push_back(AsciiLower(coding));
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  if (version >= 11 && !has_host) return RequestRefusal{400, "bad_request", "an HTTP/1.1 request needs a Host header"};
  if (codings.empty()) return std::nullopt;
  if (has_length) {
    return RequestRefusal{400, "bad_request", "send either Content-Length or Transfer-Encoding, not both"};
  }
  if (codings.back() != "chunked") {
    return RequestRefusal{400, "bad_request",
                          "Transfer-Encoding must end with 'chunked' (got '" + codings.back() + "')"};
  }
  if (codings.size() > 1) {
    return RequestRefusal{501, "not_implemented", "only Transfer-Encoding: chunked is supported"};
  }
  return std::nullopt;
}

namespace {

// The host name of a Host header or an origin's authority, lower-cased, without its
// port ("[::1]:8080" -> "[::1]").
std::string HostName(std::string_view authority) {
  if (authority.starts_with("[")) return AsciiLower(authority.substr(0, authority.find(']') + 1));
  return AsciiLower(authority.substr(0, authority.find(':')));
}

bool IsLoopbackName(const std::string& name) {
  return name == "localhost" || name == "[::1]" || name.starts_with("127.") || name.ends_with(".localhost");
}

}  // namespace

std::optional<RequestRefusal> CheckBrowser(std::string_view host, std::string_view origin, const BrowserRules& rules) {
  if (!origin.empty()) {
    const size_t scheme = origin.find("://");
    const std::string_view authority = scheme == std::string_view::npos ? std::string_view() : origin.substr(scheme + 3);
    const bool same = !authority.empty() && EqualsNoCase(authority, host);
    const bool allowed = std::find(rules.allowed_origins.begin(), rules.allowed_origins.end(), origin) != rules.allowed_origins.end();
    if (!same && !allowed) {
      return RequestRefusal{403, "cross_origin",
                            "a page from " + std::string(origin) + " may not call this server; to allow it, start reins serve "
                            "with --allow-origin " + std::string(origin)};
    }
  }
  if (rules.keys) return std::nullopt;
  const std::string name = HostName(host);
  const bool allowed = std::find(rules.allowed_hosts.begin(), rules.allowed_hosts.end(), name) != rules.allowed_hosts.end();
  if (!IsLoopbackName(name) && !allowed) {
    return RequestRefusal{403, "host_not_allowed",
                          "without --keys this server answers only loopback names (localhost, 127.0.0.1, [::1]), not '" +
                              std::string(host) + "'; pass --allow-host " + name + " to answer it, or --keys to require keys"};
  }
  return std::nullopt;
}

std::optional<RequestRefusal> CheckBodyType(std::string_view content_type, bool has_body, bool keys) {
  if (keys || !has_body) return std::nullopt;
  const std::string_view media = TrimmedSpace(content_type.substr(0, content_type.find(';')));
  if (EqualsNoCase(media, "application/json")) return std::nullopt;
  return RequestRefusal{415, "unsupported_media_type",
                        "without --keys a request body must come with Content-Type: application/json (curl: -H "
                        "'Content-Type: application/json'), not " +
                            (content_type.empty() ? std::string("none") : "'" + std::string(content_type) + "'")};
}

std::optional<std::string> QueryParam(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    size_t eq = pair.find('=');
    if (pair.substr(0, eq) == name) {
      std::string value;
      std::string_view raw = eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
      for (size_t i = 0; i < raw.size(); ++i) {
        const int hi = raw[i] == '%' && i + 2 < raw.size() ? HexValue(raw[i + 1]) : -1;
        const int lo = hi >= 0 ? HexValue(raw[i + 2]) : -1;
        if (lo >= 0) {
          value += static_cast<char>(hi * 16 + lo);
          i += 2;
        } else {
          value += raw[i] == '+' ? ' ' : raw[i];
        }
      }
      return value;
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

}  // namespace reins
