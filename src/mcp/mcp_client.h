// McpClient: one MCP server (MCP 2025-11-25, accepting 2025-06-18 and 2025-03-26 when
// a server answers with those), spawned over stdio or reached over Streamable HTTP.
// Start() opens the transport, performs the initialize handshake and lists the tools
// (following nextCursor). CallTool() runs
// tools/call with an optional progress callback. A server that dies fails the calls
// in flight with a clear error (its exit status and last stderr lines); the next call
// restarts it, with a backoff between attempts. An HTTP server that forgot the session
// is initialized again and the call, which it never processed, is sent once more. Server requests are answered: ping,
// roots/list (no roots), elicitation/create (via the elicitation hook; decline without
// one). notifications/tools/list_changed marks the catalog stale and is announced to
// on_tools_changed (the hub lists it again at once); a call made while it is stale
// lists it first.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>

#include "mcp/json_rpc.h"
#include "reins/agent_config.h"

namespace reins {

class StdioProcess;
class McpHttpTransport;

struct McpTool {
  std::string name;
  std::string title;
  std::string description;
  Json input_schema = Json{{"type", "object"}};
  Json output_schema;  // null when none
  Json annotations = Json::object();
};

struct McpClientOptions {
  int call_timeout_ms = 30000;
  int start_timeout_ms = 20000;
  int shutdown_grace_ms = 2000;
  int max_backoff_ms = 5000;
  // Server stderr lines and the client's own notes ("restarted"), for the log.
  std::function<void(const std::string& line)> log;
  // notifications/tools/list_changed arrived; called on the client's executor, before
  // any later message of the server is read.
  std::function<void()> on_tools_changed;
  // Answers elicitation/create: returns {action, content?}. Unset: decline.
  std::function<Task<Json>(const Json& params)> on_elicitation;
};

class McpClient {
 public:
  static constexpr const char* kProtocolVersion = "2025-11-25";

  McpClient(boost::asio::any_io_executor executor, McpServerConfig server, McpClientOptions options = {});
  ~McpClient();

  Task<Status> Start();
  // Parameters by value: a coroutine must own what it uses across suspensions.
  // `timeout_ms` 0: options' call_timeout_ms. Past it, the server hears notifications/cancelled.
  Task<Result<Json>> CallTool(std::string tool, Json args, JsonRpcPeer::ProgressFn on_progress = {},
                              int timeout_ms = 0);
  // True after notifications/tools/list_changed until the tools are listed again.
  bool tools_stale() const { return tools_stale_; }
  // Lists the tools again (tools() then has the new list).
  Task<Status> Relist() { return ListTools(); }
  // Shuts the server down as the spec says and waits for it; idempotent.
  Task<void> Stop();

  const std::string& name() const { return server_.name; }
  const std::vector<McpTool>& tools() const { return tools_; }
  const std::string& protocol_version() const { return protocol_version_; }
  int restarts() const { return restarts_; }
  pid_t pid() const;          // 0 when not running
  bool connected() const { return connected_; }
  int64_t malformed_lines() const;

 private:
  Task<Status> Connect();
  Status OpenStdio();
  void OpenHttp();
  Task<Result<Json>> CallOnce(std::string tool, Json args, JsonRpcPeer::ProgressFn on_progress, int timeout_ms);
  Task<Status> ListTools();
  Task<Result<Json>> AnswerServer(std::string method, Json params);
  Task<void> ReadLoop(std::shared_ptr<bool> alive, std::shared_ptr<StdioProcess> process,
                      std::shared_ptr<JsonRpcPeer> peer, uint64_t generation);
  void Log(const std::string& line) const;
  std::string LastStderr() const;

  boost::asio::any_io_executor executor_;
  McpServerConfig server_;
  McpClientOptions options_;
  std::shared_ptr<StdioProcess> process_;     // stdio servers
  std::shared_ptr<McpHttpTransport> http_;    // Streamable HTTP servers
  uint64_t session_lost_at_ = 0;              // the generation whose HTTP session was lost
  std::shared_ptr<JsonRpcPeer> peer_;
  std::vector<McpTool> tools_;
  std::string protocol_version_;
  bool connected_ = false;
  bool started_once_ = false;
  bool tools_stale_ = false;
  int restarts_ = 0;
  int backoff_ms_ = 0;
  std::chrono::steady_clock::time_point retry_at_{};
  std::deque<std::string> stderr_tail_;
  uint64_t generation_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

// The tools/call result as a reins tool result: `structuredContent` (or the JSON of a
// lone text block) is the data, or the envelope itself when it is one; `isError: true`
// is a failure whose error is the text. Other content blocks are kept under `content`.
Json McpResultToToolResult(Json result);

}  // namespace reins
