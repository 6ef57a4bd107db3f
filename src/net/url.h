// Url: the parts of an http(s) URL the HTTP client needs.
#pragma once

#include <string>
#include <string_view>

#include "reins/status.h"

namespace reins {

struct Url {
  std::string scheme;  // "http" | "https"
  std::string host;    // without brackets for IPv6 literals
  std::string port;    // explicit or the scheme's default
  std::string target;  // path + query, "/" when empty
  bool tls() const { return scheme == "https"; }
  // "https://api.openai.com:443": the connection pool's key and the host allow-list's unit.
  std::string Origin() const;
};

// Accepts http:// and https:// URLs; anything else is InvalidArgument with the reason.
// URLs holding credentials (user:password@) are refused, and never quoted back.
Result<Url> ParseUrl(std::string_view text);

// `text` with every URL in it replaced by `name` ("the provider"): for messages that
// leave the process, where an internal address must not (net errors quote URLs).
std::string WithoutUrls(std::string text, std::string_view name);

}  // namespace reins
