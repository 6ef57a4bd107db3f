// McpHub: the MCP servers one agent uses, on their own I/O thread. Start() launches
// each server named by a tool backend or marked `expose: all`, and completes the agent
// config from their tool lists (ApplyMcpCatalog); Backends() gives the ToolBackend of
// every MCP tool, which hands each call to the hub's thread and resumes the caller on
// its own executor (through the call desk, which keeps a call open while the server
// asks the person something, mcp_calls.h); Stop() shuts every server down and reaps it. Its own thread keeps
// the servers' pipes from counting as work of the runtime's io_context (a scenario run
// ends when its turns are done, not when the servers exit). Used by the scenario
// runner before the runtime is created (docs/mcp.md).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <thread>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include "mcp/mcp_calls.h"
#include "mcp/mcp_client.h"
#include "reins/agent_config.h"
#include "reins/clock.h"
#include "reins/tool_backend.h"

namespace reins {

class McpHub {
 public:
  explicit McpHub(McpClientOptions options = {});
  ~McpHub();  // stops the servers if Stop() was not called, then joins the thread

  // True when `config` needs any MCP server.
  static bool Needed(const AgentConfig& config);

  // Blocking; call from any thread but the hub's.
  Status Start(AgentConfig& config);
  std::map<std::string, std::shared_ptr<ToolBackend>> Backends(const AgentConfig& config, Clock& clock) const;
  // Between turns: when a server said its tool list changed, lists it again and
  // completes a fresh copy of the config Start() was given. The new config, or nullopt
  // when nothing changed (or the new lists do not fit the config: logged, old kept).
  // Blocking.
  std::optional<AgentConfig> RefreshCatalog();
  void Stop();

 private:
  Task<Status> StartAll(AgentConfig* config);
  Task<std::optional<AgentConfig>> Refresh();
  Status ApplyCatalogs(AgentConfig& config) const;
  Task<void> StopAll();

  McpClientOptions options_;
  mutable boost::asio::io_context io_;  // Backends() hands out its executor
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::shared_ptr<McpCallDesk> desk_;  // touched on the hub thread only
  std::thread thread_;
  std::map<std::string, std::shared_ptr<McpClient>> clients_;  // touched on the hub thread only
  bool stopped_ = false;
  AgentConfig base_;  // the config before the servers' tool lists completed it
};

// For the entry points (reins run/chat/serve): starts the servers `config` needs and
// adds their tools' backends to `backends` (entries already there win: fixtures).
// Null, and nothing started, when the agent uses no MCP server.
// `log` receives the servers' stderr lines and the client's notes (restarts); unset,
// they are dropped (a dead server's last lines still reach the failed call's error).
Result<std::unique_ptr<McpHub>> StartMcpServers(AgentConfig& config, Clock& clock,
                                                std::map<std::string, std::shared_ptr<ToolBackend>>* backends,
                                                std::function<void(const std::string&)> log = {});

// Completes `config` from one server's tool list:
// - a tool whose backend is `mcp: {server, tool?}` takes the server tool's input
//   schema, title, description and annotations, unless the config gives them;
// - with `expose_all`, every other tool of the server is added under its own name;
// - timing and approval not set in the config follow the annotations: readOnlyHint
//   true -> immediate, explicitly false -> deferred; destructiveHint true (and not
//   read-only) -> approval required.
// Fails, naming every problem, when a configured tool is not offered or a schema does
// not compile.
Status ApplyMcpCatalog(AgentConfig& config, const std::string& server, bool expose_all,
                       const std::vector<McpTool>& tools);

}  // namespace reins
