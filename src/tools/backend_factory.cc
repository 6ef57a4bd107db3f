#include <set>

#include "tools/fixture_backend.h"
#include "tools/http_backend.h"
#include "tools/tool_router.h"

namespace reins {
namespace {

// builtin: echo — returns its arguments as data; for demos and tests.
class EchoBackend final : public ToolBackend {
 public:
  Task<Result<Json>> Invoke(const ToolRequest& request) override {
    co_return Json{{"success", true}, {"next_action", "continue"}, {"data", request.args}};
  }
  bool ForwardsTraceContext() const override { return false; }
  bool KeepsDeadline() const override { return true; }  // answers at once
};

class UnavailableBackend final : public ToolBackend {
 public:
  explicit UnavailableBackend(std::string why) : why_(std::move(why)) {}
  Task<Result<Json>> Invoke(const ToolRequest&) override { co_return Unimplemented(why_); }
  bool ForwardsTraceContext() const override { return false; }
  bool KeepsDeadline() const override { return true; }  // answers at once

 private:
  std::string why_;
};

}  // namespace

ToolBackend* ToolRouter::Find(const std::string& tool) const {
  auto it = backends_.find(tool);
  return it == backends_.end() ? nullptr : it->second.get();
}

bool ToolRouter::ResumesQuestions(const std::string& tool) const {
  const ToolBackend* backend = Find(tool);
  return backend != nullptr && backend->ResumesQuestions();
}

ToolRouter BuildToolRouter(const AgentConfig& config, Clock& clock, const ToolBackendSources& sources) {
  ToolRouter router;
  std::shared_ptr<HttpClient> http;  // one connection pool for every http tool
  std::set<std::string> hosts = LiteralHttpToolHosts(config);
  for (const ToolDef& tool : config.tools) {
    if (auto it = sources.overrides.find(tool.name); it != sources.overrides.end()) {
      router.Set(tool.name, it->second);
      continue;
    }
    switch (tool.backend.kind) {
      case ToolBackendConfig::Kind::kFixture:
        router.Set(tool.name, std::make_shared<FixtureBackend>(tool.name, tool.backend.spec, clock));
        break;
      case ToolBackendConfig::Kind::kBuiltin:
        router.Set(tool.name, std::make_shared<EchoBackend>());
        break;
      case ToolBackendConfig::Kind::kHttp:
        if (!http) http = std::make_shared<HttpClient>();
        router.Set(tool.name, std::make_shared<HttpBackend>(tool, hosts, http, clock));
        break;
      case ToolBackendConfig::Kind::kMcp:
        if (std::shared_ptr<ToolBackend> mcp = sources.mcp ? sources.mcp(tool) : nullptr) {
          router.Set(tool.name, std::move(mcp));
        } else {
          router.Set(tool.name, std::make_shared<UnavailableBackend>("no MCP server runs this tool (the entry point started none for it)"));
        }
        break;
      case ToolBackendConfig::Kind::kNone:
        break;
    }
  }
  return router;
}

}  // namespace reins
