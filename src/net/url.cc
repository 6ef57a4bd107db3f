#include "net/url.h"

#include <algorithm>
#include <cctype>

namespace reins {

std::string Url::Origin() const { return scheme + "://" + host + ":" + port; }

Result<Url> ParseUrl(std::string_view text) {
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
  if (authority.find('@') != std::string_view::npos) {
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

}  // namespace reins
