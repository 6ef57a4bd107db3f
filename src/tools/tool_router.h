// ToolRouter: which backend runs which tool, built once per runtime from the agent
// config (backend_factory.cc); the scenario runner replaces backends with fixtures.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "reins/agent_config.h"
#include "reins/clock.h"
#include "reins/tool_backend.h"

namespace reins {

class ToolRouter {
 public:
  void Set(const std::string& tool, std::shared_ptr<ToolBackend> backend) { backends_[tool] = std::move(backend); }
  // nullptr when the tool has no backend.
  ToolBackend* Find(const std::string& tool) const;

 private:
  std::map<std::string, std::shared_ptr<ToolBackend>> backends_;
};

// Backends for every tool of `config` that names one it can build here (fixture,
// builtin, http; the http tools share one connection pool). MCP tools get a backend
// that fails each call with a message saying so, until the entry point's McpHub
// (src/mcp) sets theirs.
ToolRouter BuildToolRouter(const AgentConfig& config, Clock& clock);

}  // namespace reins
