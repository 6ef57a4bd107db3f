// AgentHost: where an agent is assembled to run, the same way for `reins chat`,
// `reins serve` and the scenario runner (run, eval, fuzz). It starts the MCP servers
// the agent uses and completes the config from their tool lists; gives the runtime
// its tool backends from the one factory (the kinds the config names, the MCP
// servers' tools, the caller's overrides such as scenario fixtures); and when a server
// announces that its tool list changed, swaps the runtime's catalog then and there.
//
//   auto host = AgentHost::Start(config, clock, {.mcp_log = log});
//   Runtime* runtime = (*host)->StartRuntime(std::move(parts));
//   ... between turns, where the order must be reproducible: (*host)->AwaitCatalog();
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "reins/agent_config.h"
#include "reins/clock.h"
#include "reins/runtime.h"
#include "reins/tool_backend.h"

namespace reins {

class McpHub;
class McpRelay;
namespace telemetry {
class TurnTelemetry;
class OtlpExporter;
}  // namespace telemetry

struct HostOptions {
  // Backends that replace the config's, MCP tools' included (scenario fixtures).
  std::map<std::string, std::shared_ptr<ToolBackend>> overrides;
  // The MCP servers' stderr lines and the client's notes (restarts); unset: dropped
  // (a dead server's last lines still reach the failed call's error).
  std::function<void(const std::string&)> mcp_log;
};

class AgentHost {
 public:
  // Starts the MCP servers `config` uses (none: nothing to start). Fails naming every
  // server that did not start and every tool its list does not fit.
  static Result<std::unique_ptr<AgentHost>> Start(AgentConfig config, std::shared_ptr<Clock> clock,
                                                  HostOptions options = {});
  ~AgentHost();  // the runtime goes first, then the servers

  // The agent as completed from the servers' tool lists when they started.
  const AgentConfig& agent() const { return agent_; }
  // A backend for every tool of agent(), from the same factory as the runtime's (for
  // a loop with no runtime: the naive baseline of a scenario run).
  std::map<std::string, std::shared_ptr<ToolBackend>> Backends() const;

  // Builds the runtime over the agent's newest catalog and `parts` (model, store...);
  // the host sets the parts' clock and tool backends, and when the agent's telemetry
  // (or OTEL_EXPORTER_OTLP_ENDPOINT) names a collector, feeds its durable events to
  // OpenTelemetry besides `parts.on_event`. Once.
  Result<Runtime*> StartRuntime(RuntimeParts parts);
  // The span exporter when telemetry is on (its counts for /metrics), else null.
  const telemetry::OtlpExporter* exporter() const;
  Runtime* runtime() const { return runtime_.get(); }

  // Stops the MCP servers (and the relay) now, while the event loop the turns ran on
  // still exists: a call a server still holds open (a question nobody answered) holds
  // that loop's executor, which must be released before the loop is destroyed. No turn
  // may run afterwards. The destructor does it otherwise.
  void StopServers();

  // Waits until every tool-list change the servers announced so far is applied to the
  // runtime: a scenario's turn 2 sees the tool that turn 1's call added. Not needed for
  // correctness elsewhere: changes apply as they are announced.
  void AwaitCatalog();

 private:
  AgentHost(AgentConfig agent, std::shared_ptr<Clock> clock, HostOptions options);
  void OnCatalog(AgentConfig changed);  // on the hub's thread
  // Makes the backend of an MCP tool (unset when no server runs).
  std::function<std::shared_ptr<ToolBackend>(const ToolDef&)> McpBackends() const;

  AgentConfig agent_;
  std::shared_ptr<Clock> clock_;
  HostOptions options_;
  std::unique_ptr<McpHub> hub_;  // null when the agent uses no MCP server
  // MCP questions across replicas: set when the runtime's store is shared and the
  // agent uses an MCP server (host/mcp_relay.h).
  std::unique_ptr<McpRelay> relay_;
  std::mutex mu_;                // guards runtime_'s creation and destruction, newest_, closing_
  std::optional<AgentConfig> newest_;  // a change announced before the runtime existed
  bool closing_ = false;
  // Before runtime_: destroyed after it, since the runtime's events reach it to the end.
  std::unique_ptr<telemetry::TurnTelemetry> telemetry_;
  std::unique_ptr<Runtime> runtime_;
};

}  // namespace reins
