// ToolRouter: which backend runs which tool, built for each tool catalog of a runtime
// by the one backend factory (backend_factory.cc): every kind a config names (fixture,
// builtin, http, mcp), and the overrides an entry point brings (scenario fixtures).
#pragma once

#include <functional>
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
  // True when the tool's backend can hold a call open across turns on a question
  // (ToolBackend::ResumesQuestions).
  bool ResumesQuestions(const std::string& tool) const;
  const std::map<std::string, std::shared_ptr<ToolBackend>>& backends() const { return backends_; }

 private:
  std::map<std::string, std::shared_ptr<ToolBackend>> backends_;
};

// Where backends come from besides the config itself.
struct ToolBackendSources {
  // Backends that replace the config's (scenario fixtures, test doubles).
  std::map<std::string, std::shared_ptr<ToolBackend>> overrides;
  // The backend of an MCP tool (src/mcp's McpHub makes them); unset or null: the
  // tool's calls fail, saying that no MCP server runs it.
  std::function<std::shared_ptr<ToolBackend>(const ToolDef&)> mcp;
};

// A backend for every tool of `config`: an override when there is one, else the kind
// its config names (the http tools share one connection pool).
ToolRouter BuildToolRouter(const AgentConfig& config, Clock& clock, const ToolBackendSources& sources = {});

}  // namespace reins
