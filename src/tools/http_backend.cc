#include "tools/http_backend.h"

#include <algorithm>
#include <cctype>

#include "domain/detail_log.h"
#include "domain/json_parse.h"
#include "net/url.h"

namespace reins {
namespace {

constexpr size_t kSnippetBytes = 300;

std::string PercentEncode(const std::string& s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out += {'%', kHex[c >> 4], kHex[c & 15]};
    }
  }
  return out;
}

std::string Snippet(const std::string& body) {
  if (body.size() <= kSnippetBytes) return body;
  size_t cut = kSnippetBytes;
  while (cut > 0 && (static_cast<unsigned char>(body[cut]) & 0xC0) == 0x80) --cut;  // not inside UTF-8
  return body.substr(0, cut) + "…";
}

Json ErrorResult(std::string message) {
  return Json{{"success", false}, {"next_action", "error"}, {"error", std::move(message)}};
}

}  // namespace

HttpBackend::HttpBackend(const ToolDef& tool, std::set<std::string> allowed_hosts, std::shared_ptr<HttpClient> client,
                         Clock& clock)
    : tool_(tool.name), allowed_hosts_(std::move(allowed_hosts)), client_(std::move(client)), clock_(clock) {
  const Json& spec = tool.backend.spec;
  url_template_ = spec.value("url", "");
  method_ = spec.value("method", "POST");
  timeout_ms_ = spec.value("timeout_ms", tool.timeout_ms);
  if (spec.contains("headers") && spec["headers"].is_object()) {
    for (const auto& [name, value] : spec["headers"].items()) {
      headers_.push_back({name, value.is_string() ? value.get<std::string>() : value.dump()});
    }
  }
  if (spec.contains("allowed_hosts") && spec["allowed_hosts"].is_array()) {
    allowed_hosts_.clear();
    for (const Json& h : spec["allowed_hosts"]) {
      if (h.is_string()) allowed_hosts_.insert(h.get<std::string>());
    }
  }
}

Result<std::string> HttpBackend::ResolveUrl(const Json& args) const {
  std::string url;
  for (size_t i = 0; i < url_template_.size();) {
    size_t open = url_template_.find('{', i);
    if (open == std::string::npos) {
      url.append(url_template_, i);
      break;
    }
    size_t close = url_template_.find('}', open);
    if (close == std::string::npos) return InvalidArgument("unclosed '{' in url " + url_template_);
    url.append(url_template_, i, open - i);
    std::string name = url_template_.substr(open + 1, close - open - 1);
    if (!args.is_object() || !args.contains(name) || args[name].is_null() || args[name].is_structured()) {
      return InvalidArgument("argument '" + name + "' (used in the tool's url) is missing or not a plain value");
    }
    const Json& v = args[name];
    const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
    // Percent-encoding keeps '/' out, but a whole "." or ".." segment would still walk the
    // tool server's path (servers normalise it, encoded or not).
    if (text == "." || text == "..") {
      return InvalidArgument("argument '" + name + "' is '" + text + "', which would change the url's path");
    }
    url += PercentEncode(text);
    i = close + 1;
  }
  return url;
}

Task<Result<Json>> HttpBackend::Invoke(const ToolRequest& request) {
  Result<std::string> url = ResolveUrl(request.args);
  if (!url.ok()) co_return ErrorResult(url.status().message());
  Result<Url> parsed = ParseUrl(*url);
  if (!parsed.ok()) co_return ErrorResult(parsed.status().message());
  if (!allowed_hosts_.contains(parsed->host)) {
    co_return ErrorResult("host " + parsed->host + " is not on this tool's allow-list");
  }
  HttpRequest http;
  http.method = method_;
  http.url = *url;
  http.headers = headers_;
  if (!request.idempotency_key.empty()) http.headers.push_back({"Idempotency-Key", request.idempotency_key});
  if (!request.session_id.empty()) http.headers.push_back({"Reins-Session-Id", request.session_id});
  if (!request.traceparent.empty()) http.headers.push_back({"traceparent", request.traceparent});
  if (method_ != "GET") http.body = request.args.dump();
  const int timeout_ms = static_cast<int>(std::min<int64_t>(timeout_ms_, std::max<int64_t>(request.timeout_ms, 1)));
  http.timeouts.total_ms = timeout_ms;
  http.timeouts.first_byte_ms = timeout_ms;
  http.timeouts.idle_ms = timeout_ms;
  http.timeouts.connect_ms = std::min(timeout_ms, 10000);

  RealWorkScope real(clock_);  // simulated time waits for the real call
  Result<HttpResponse> response = HttpResponse{};
  co_await client_->Send(std::move(http), response);
  // The model, the trace and API clients learn what failed, not where the tool's
  // server lives: the address goes to the detail log.
  if (!response.ok()) {
    LogDetail(tool_, response.status().message());
    co_return Status(response.status().code(), tool_ + ": " + WithoutUrls(response.status().message(), "the tool's server"));
  }
  const HttpResponse& r = *response;
  std::string where = "HTTP " + std::to_string(r.status) + " from the tool's server";
  if (r.status < 200 || r.status >= 300) {
    LogDetail(tool_, "HTTP " + std::to_string(r.status) + " from " + parsed->Origin());
    co_return ErrorResult(where + ": " + Snippet(r.body));
  }
  if (r.status == 204 || r.body.empty()) co_return Json{{"success", true}, {"next_action", "continue"}};
  Json body = ParseJsonOrDiscarded(r.body);
  if (body.is_discarded()) co_return ErrorResult(where + " is not JSON: " + Snippet(r.body));
  co_return body;
}

std::set<std::string> LiteralHttpToolHosts(const AgentConfig& config) {
  std::set<std::string> hosts;
  for (const ToolDef& tool : config.tools) {
    if (tool.backend.kind != ToolBackendConfig::Kind::kHttp) continue;
    std::string url = tool.backend.spec.value("url", "");
    Result<Url> parsed = ParseUrl(url);
    if (parsed.ok() && parsed->host.find('{') == std::string::npos) hosts.insert(parsed->host);
  }
  return hosts;
}

}  // namespace reins
