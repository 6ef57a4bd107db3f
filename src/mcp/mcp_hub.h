// McpHub: the MCP servers one agent uses, on their own I/O thread. Start() launches
// each server named by a tool backend or marked `expose: all`, and completes the agent
// config from their tool lists (ApplyMcpCatalog); Backends() gives the ToolBackend of
// every MCP tool, which hands each call to the hub's thread and resumes the caller on
// its own executor (through the call desk, which keeps a call open while the server
// asks the person something, mcp_calls.h); Stop() shuts every server down and reaps it. Its own thread keeps
// the servers' pipes from counting as work of the runtime's io_context (a scenario run
// ends when its turns are done, not when the servers exit). When a server announces
// that its tool list changed, the hub lists it again on its thread and hands the
// completed config to on_catalog at once (AgentHost swaps the runtime's catalog).
// Entry points start it through AgentHost (src/host, docs/mcp.md).
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
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
#include "mcp/mcp_pins.h"
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

  // Receives a fresh copy of the config Start() was given, completed from the servers'
  // new tool lists, each time a server announces a change (on the hub's thread). A new
  // list that no longer fits the config is logged and not handed on. Set before Start.
  void set_on_catalog(std::function<void(AgentConfig)> on_catalog) { on_catalog_ = std::move(on_catalog); }

  // The agent's MCP lock (mcp_pins.h), read at start and at each tool-list change: a
  // tool it does not match is withheld. Unset, or no file there: nothing is withheld.
  // Set before Start.
  void set_lock_path(std::string path) { lock_path_ = std::move(path); }

  // Blocking; call from any thread but the hub's.
  Status Start(AgentConfig& config);
  // What each running server listed last, by server name (for `reins check --pin`).
  // Call after Start, from any thread but the hub's.
  std::map<std::string, std::vector<McpTool>> Listed();
  // The backend of one MCP tool of `config` (nullptr when its server is not running);
  // Backends: those of every MCP tool.
  std::shared_ptr<ToolBackend> Backend(const ToolDef& tool, Clock& clock) const;
  std::map<std::string, std::shared_ptr<ToolBackend>> Backends(const AgentConfig& config, Clock& clock) const;
  // Waits until every tool-list change announced so far has reached on_catalog: a
  // caller that needs a reproducible order of turns and catalogs (scenario runs, chat)
  // calls it between turns. Not from the hub's thread.
  void AwaitCatalog();
  void Stop();

 private:
  Task<Status> StartAll(AgentConfig* config);
  Task<void> Reapply(std::string server);
  Status ApplyCatalogs(AgentConfig& config) const;
  void SayWithheld(const AgentConfig& config) const;
  Task<void> StopAll();

  McpClientOptions options_;
  mutable boost::asio::io_context io_;  // Backends() hands out its executor
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::shared_ptr<McpCallDesk> desk_;  // touched on the hub thread only
  std::thread thread_;
  std::map<std::string, std::shared_ptr<McpClient>> clients_;  // touched on the hub thread only
  std::atomic<bool> stopped_ = false;  // set by Stop(), read on the hub's thread
  AgentConfig base_;  // the config before the servers' tool lists completed it
  std::string lock_path_;
  std::function<void(AgentConfig)> on_catalog_;
  std::mutex pending_mu_;
  std::condition_variable settled_;
  int pending_ = 0;  // announced changes not yet handed to on_catalog
};

// Completes `config` from one server's tool list:
// - a tool whose backend is `mcp: {server, tool?}` takes the server tool's input
//   schema, title, description and annotations, unless the config gives them;
// - with `expose_all`, every other tool of the server is added under its own name;
// - timing and approval not set in the config follow the annotations: readOnlyHint
//   true -> immediate, explicitly false -> deferred; destructiveHint true (and not
//   read-only) -> approval required.
// Fails, naming every problem, when a configured tool is not offered or a schema does
// not compile.
// With `lock`, a tool whose listing the lock does not match is withheld instead
// (ToolDef::withheld says why; mcp_pins.h): named in the config, filled from nothing.
Status ApplyMcpCatalog(AgentConfig& config, const std::string& server, bool expose_all,
                       const std::vector<McpTool>& tools, const McpLock* lock = nullptr);

}  // namespace reins
