#include "net/url.h"

#include <algorithm>
#include <cctype>

#include <re2/re2.h>

namespace reins {

std::string Url::Origin() const { return scheme + "://" + host + ":" + port; }

namespace {

// The URL as it may be quoted in a message: credentials in it are never repeated.
std::string Quotable(std::string_view text) {
  size_t sep = text.find("://");
  size_t start = sep == std::string_view::npos ? 0 : sep + 3;
  size_t end = text.find_first_of("/?#", start);
  std::string_view authority = text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
  size_t at = authority.rfind('@');
  if (at == std::string_view::npos) return std::string(text);
  return std::string(text.substr(0, start)) + "***@" + std::string(text.substr(start + at + 1));
}

}  // namespace

Result<Url> ParseUrl(std::string_view full_text) {
  const std::string quoted = Quotable(full_text);
  std::string_view text = quoted;
  Url url;
  size_t sep = text.find("://");
  if (sep == std::string_view::npos) return InvalidArgument("URL '" + std::string(text) + "' has no scheme (write http:// or https://)");
  url.scheme = std::string(text.substr(0, sep));
  std::transform(url.scheme.begin(), url.scheme.end(), url.scheme.begin(), [](unsigned char c) { return std::tolower(c); });
  if (url.scheme != "http" && url.scheme != "https") {
    return InvalidArgument("URL '" + std::string(text) + "': scheme must be http or https");
  }
  std::string_view rest = text.substr(sep + 3);
  size_t slash = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, slash);
  url.target = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (size_t hash = url.target.find('#'); hash != std::string::npos) url.target.resize(hash);
  if (url.target.empty() || url.target.front() != '/') url.target.insert(0, "/");
  if (quoted != full_text || authority.find('@') != std::string_view::npos) {
    return InvalidArgument("URL '" + std::string(text) + "': credentials in URLs are not supported (use a header)");
  }
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {  // [::1]:8080
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return InvalidArgument("URL '" + std::string(text) + "': unclosed '['");
    url.host = std::string(authority.substr(1, close - 1));
    if (close + 1 < authority.size() && authority[close + 1] == ':') port = authority.substr(close + 2);
  } else {
    size_t colon = authority.rfind(':');
    url.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (url.host.empty()) return InvalidArgument("URL '" + std::string(text) + "' has no host");
  std::transform(url.host.begin(), url.host.end(), url.host.begin(), [](unsigned char c) { return std::tolower(c); });
  if (!port.empty() && !std::all_of(port.begin(), port.end(), [](unsigned char c) { return std::isdigit(c); })) {
    return InvalidArgument("URL '" + std::string(text) + "': port must be a number");
  }
  url.port = port.empty() ? (url.tls() ? "443" : "80") : std::string(port);
  return url;
}

std::string WithoutUrls(std::string text, std::string_view name) {
  static const RE2 kUrl(R"([A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>]+)");
  RE2::GlobalReplace(&text, kUrl, std::string(name));
  return text;
}

}  // namespace reins
