// HttpBackend: the `http` tool backend. A call becomes one request to the configured
// URL: POST/PUT send the arguments as a JSON body (GET sends none); `{name}` anywhere
// in the URL is replaced by that argument, percent-encoded. Every call carries its
// idempotency key as an `Idempotency-Key` header, so a retried write (crash recovery)
// can be de-duplicated by the service.
//
// A 2xx response with a JSON body is the result (a full envelope or plain data; the
// executor normalises it); 204 is a bare success. Any other status, or a 2xx body
// that is not JSON, is an error result naming the status with a bounded snippet of
// the body. A transport failure (refused, timeout) is a non-OK Status.
//
// The host allow-list: the URL's host must be one the config names (the tool's
// `allowed_hosts`, else every host written literally in an http tool URL of the
// agent), so an argument cannot point the tool elsewhere at run time.
//
// Time: a call takes at most the smaller of the backend's own `timeout_ms` and the
// call's budget (ToolRequest.timeout_ms: the tool's timeout_ms, or less when the turn's
// budget ends sooner), in real time; while it runs, simulated time (scenario runs)
// stands still, so the clock never declares a real call timed out that is still going.
#pragma once

#include <memory>
#include <set>
#include <string>

#include "net/http_client.h"
#include "reins/agent_config.h"
#include "reins/clock.h"
#include "reins/tool_backend.h"

namespace reins {

class HttpBackend final : public ToolBackend {
 public:
  HttpBackend(const ToolDef& tool, std::set<std::string> allowed_hosts, std::shared_ptr<HttpClient> client,
              Clock& clock);
  Task<Result<Json>> Invoke(const ToolRequest& request) override;

 private:
  Result<std::string> ResolveUrl(const Json& args) const;

  std::string tool_;
  std::string url_template_;
  std::string method_;
  std::vector<HttpHeaderField> headers_;
  int timeout_ms_;
  std::set<std::string> allowed_hosts_;
  std::shared_ptr<HttpClient> client_;
  Clock& clock_;
};

// Hosts named literally in the http tool URLs of `config` (the default allow-list).
std::set<std::string> LiteralHttpToolHosts(const AgentConfig& config);

}  // namespace reins
