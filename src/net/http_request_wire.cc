#include <algorithm>
#include <charconv>

#include "domain/text.h"
#include "net/http_client_impl.h"

namespace reins::outbound {
namespace {

http::verb Verb(const std::string& method) {
  http::verb v = http::string_to_verb(method);
  return v == http::verb::unknown ? http::verb::post : v;
}

// The header fields a request sends: Host and User-Agent, then the caller's, each
// replacing a field of the same name as Beast's `set` did; Content-Type when there is
// a body and the caller gave none; the length as Beast's prepare_payload set it.
Result<WireRequest> BuildRequest(HttpRequest& r, const Url& url) {
  const bool default_port = url.port == (url.tls() ? "443" : "80");
  std::vector<HttpHeaderField> fields = {{"Host", default_port ? url.host : url.host + ":" + url.port},
                                         {"User-Agent", "reins/0.1"}};
  for (HttpHeaderField& h : r.headers) {
    if (h.name.find_first_of("\r\n:") != std::string::npos || h.value.find_first_of("\r\n") != std::string::npos) {
      return InvalidArgument("request header '" + h.name + "' has a line break in it (or a colon in its name)");
    }
    // The framing is the client's to set.
    if (EqualsNoCase(h.name, "content-length") || EqualsNoCase(h.name, "transfer-encoding")) continue;
    auto same = std::find_if(fields.begin(), fields.end(),
                             [&](const HttpHeaderField& f) { return EqualsNoCase(f.name, h.name); });
    if (same != fields.end()) {
      same->value = h.value;
    } else {
      fields.push_back(h);
    }
  }
  const bool has_type = std::any_of(fields.begin(), fields.end(),
                                    [](const HttpHeaderField& f) { return EqualsNoCase(f.name, "content-type"); });
  if (!r.body.empty() && !has_type) fields.push_back({"Content-Type", "application/json"});
  const http::verb verb = Verb(r.method);
  if (!r.body.empty() || verb == http::verb::post || verb == http::verb::put || verb == http::verb::options) {
    fields.push_back({"Content-Length", std::to_string(r.body.size())});
  }
  // Its exact size: where the caller cannot build the request again, the head is kept as
  // long as the answer is awaited (a retry sends it again).
  const std::string_view method = http::to_string(verb);
  size_t head_bytes = method.size() + 1 + url.target.size() + sizeof(" HTTP/1.1\r\n") - 1 + 2;
  for (const HttpHeaderField& f : fields) head_bytes += f.name.size() + 2 + f.value.size() + 2;
  WireRequest wire;
  wire.head.reserve(head_bytes);
  wire.head += method;
  wire.head += ' ';
  wire.head += url.target;
  wire.head += " HTTP/1.1\r\n";
  for (const HttpHeaderField& f : fields) {
    wire.head += f.name;
    wire.head += ": ";
    wire.head += f.value;
    wire.head += "\r\n";
  }
  wire.head += "\r\n";
  wire.body = std::move(r.body);
  return wire;
}

}  // namespace

std::string What(const Outgoing& out) {
  return std::string(http::to_string(out.verb)) + " " + out.url->Origin() + out.url->target;
}

std::string PoolKey(const Url& url, const asio::execution_context& context) {
  return url.Origin() + "@" + std::to_string(reinterpret_cast<uintptr_t>(&context));
}

int KeepAliveMs(std::string_view keep_alive, int fallback_ms) {
  const size_t at = keep_alive.find("timeout=");
  if (at == std::string_view::npos) return fallback_ms;
  const std::string_view digits = keep_alive.substr(at + 8);
  int seconds = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), seconds);
  if (ec != std::errc() || seconds < 0) return fallback_ms;
  return std::min(fallback_ms, (std::min(seconds, 1 << 20) - 1) * 1000);
}

Result<std::unique_ptr<Outgoing>> Prepare(HttpRequest& request, Result<std::shared_ptr<const Url>> url,
                                          size_t max_request_bytes) {
  auto out = std::make_unique<Outgoing>();
  REINS_ASSIGN_OR_RETURN(out->url, std::move(url));
  out->verb = Verb(request.method);
  if (request.body.size() > max_request_bytes) {
    return ResourceExhausted(request.method + " " + request.url + ": the request body (" +
                             std::to_string(request.body.size()) + " bytes) is larger than the cap of " +
                             std::to_string(max_request_bytes));
  }
  REINS_ASSIGN_OR_RETURN(out->wire, BuildRequest(request, *out->url));
  out->again = std::move(request.again);
  out->head_bytes = out->wire.head.size();
  out->body_bytes = out->wire.body.size();
  return out;
}

bool WholeAgain(Outgoing& out) {
  if (out.wire.head.size() == out.head_bytes && out.wire.body.size() == out.body_bytes) return true;
  HttpRequest request = out.again();
  Result<WireRequest> wire = BuildRequest(request, *out.url);
  if (!wire.ok() || wire->head.size() != out.head_bytes || wire->body.size() != out.body_bytes) return false;
  out.wire = std::move(*wire);
  return true;
}

}  // namespace reins::outbound
