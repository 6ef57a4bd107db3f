#include "mcp/mcp_client.h"

#include <algorithm>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include "domain/json_parse.h"
#include "mcp/http_transport.h"
#include "mcp/stdio_process.h"

namespace reins {
namespace {

bool SupportedVersion(const std::string& v) {
  return v == "2025-11-25" || v == "2025-06-18" || v == "2025-03-26";
}

// A string field, "" when absent or of another type (servers are not trusted to be right).
std::string Text(const Json& j, const char* key) {
  auto it = j.is_object() ? j.find(key) : j.end();
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

McpTool ToolFromJson(const Json& t) {
  McpTool tool;
  tool.name = Text(t, "name");
  tool.title = Text(t, "title");
  if (tool.title.empty() && t.contains("annotations")) tool.title = Text(t["annotations"], "title");
  tool.description = Text(t, "description");
  if (t.contains("inputSchema") && t["inputSchema"].is_object()) tool.input_schema = t["inputSchema"];
  if (t.contains("outputSchema") && t["outputSchema"].is_object()) tool.output_schema = t["outputSchema"];
  if (t.contains("annotations") && t["annotations"].is_object()) tool.annotations = t["annotations"];
  return tool;
}

}  // namespace

McpClient::McpClient(boost::asio::any_io_executor executor, McpServerConfig server, McpClientOptions options)
    : executor_(std::move(executor)), server_(std::move(server)), options_(std::move(options)) {}

McpClient::~McpClient() {
  *alive_ = false;
  if (peer_) peer_->FailAll(Aborted("MCP client for " + server_.name + " was destroyed"));
  // process_'s destructor kills and reaps the child if Stop() was not awaited.
}

pid_t McpClient::pid() const { return process_ && !process_->exited() ? process_->pid() : 0; }

int64_t McpClient::malformed_lines() const { return peer_ ? peer_->malformed() : 0; }

void McpClient::Log(const std::string& line) const {
  if (options_.log) options_.log("[mcp " + server_.name + "] " + line);
}

std::string McpClient::LastStderr() const {
  std::string out;
  for (const std::string& l : stderr_tail_) out += (out.empty() ? "" : " | ") + l;
  return out;
}

Task<Status> McpClient::Start() {
  Status s = co_await Connect();
  co_return s;
}

Status McpClient::OpenStdio() {
  Result<std::unique_ptr<StdioProcess>> spawned = StdioProcess::Spawn(executor_, server_.command, server_.env);
  if (!spawned.ok()) return spawned.status();
  process_ = std::shared_ptr<StdioProcess>(std::move(spawned).value());
  std::shared_ptr<StdioProcess> process = process_;
  peer_ = std::make_shared<JsonRpcPeer>(executor_, server_.name, [process](std::string m) { process->WriteLine(std::move(m)); });
  stderr_tail_.clear();
  boost::asio::co_spawn(executor_, ReadLoop(alive_, process, peer_, generation_), boost::asio::detached);
  return OkStatus();
}

// A fresh transport per session: a new session must not carry the old session's id.
void McpClient::OpenHttp() {
  std::vector<HttpHeaderField> headers;
  for (const auto& [name, value] : server_.headers) headers.push_back({name, value});
  // The socket's bound is a backstop under every JSON-RPC call's own deadline, the
  // start's included (initialize, tools/list): a short call timeout must not cut those.
  const int socket_ms = std::max(options_.call_timeout_ms, options_.start_timeout_ms);
  http_ = std::make_shared<McpHttpTransport>(executor_, server_.url, std::move(headers), socket_ms);
  std::shared_ptr<McpHttpTransport> http = http_;
  peer_ = std::make_shared<JsonRpcPeer>(executor_, server_.name, [http](std::string m) { http->Post(std::move(m)); });
  std::weak_ptr<JsonRpcPeer> peer = peer_;
  http->set_on_message([peer](const std::string& m) {
    if (auto p = peer.lock()) p->Receive(m);
  });
  uint64_t generation = generation_;
  auto alive = alive_;
  http->set_on_session_lost([this, alive, generation] {
    if (!*alive || generation != generation_) return;
    connected_ = false;
    session_lost_at_ = generation;
    Log("the server lost the session; initializing again");
  });
  http->set_log([this, alive](const std::string& line) {
    if (*alive) Log(line);
  });
}

Task<Status> McpClient::Connect() {
  if (process_ || http_) {  // a previous, dead instance or session
    if (process_) co_await process_->Shutdown(0);
    if (http_) co_await http_->Close();
    ++restarts_;
    Log("reconnecting (attempt " + std::to_string(restarts_) + ")");
  }
  ++generation_;
  if (server_.url.empty()) {
    if (Status opened = OpenStdio(); !opened.ok()) co_return opened;
  } else {
    OpenHttp();
  }
  std::shared_ptr<JsonRpcPeer> peer = peer_;
  auto alive = alive_;
  // Plain lambdas handing over to member coroutines (parameters by value): GCC 12 can
  // destroy the captures of a coroutine lambda twice.
  peer->set_request_handler([this](const std::string& method, const Json& params) { return AnswerServer(method, params); });
  peer->set_notification_handler([this, alive](const std::string& method, const Json& params) {
    if (!*alive) return;
    if (method == "notifications/tools/list_changed") {
      tools_stale_ = true;
      if (options_.on_tools_changed) options_.on_tools_changed();
    }
    if (method == "notifications/message" && params.contains("data")) Log(params["data"].dump());
  });

  Json init_params = {{"protocolVersion", kProtocolVersion},
                      {"capabilities", {{"elicitation", {{"form", Json::object()}}}, {"roots", {{"listChanged", false}}}}},
                      {"clientInfo", {{"name", "reins"}, {"version", "0.1.0"}}}};
  const std::string initialize = "initialize";  // (GCC 12: no string literal beside co_await)
  Result<Json> init = co_await peer->Call(initialize, std::move(init_params), options_.start_timeout_ms);
  if (!*alive) co_return Aborted("MCP client closed");
  if (!init.ok()) co_return Unavailable("MCP server " + server_.name + " did not initialize: " + init.status().message());
  protocol_version_ = Text(*init, "protocolVersion");
  if (!SupportedVersion(protocol_version_)) {
    co_return Unavailable("MCP server " + server_.name + " speaks protocol '" + protocol_version_ +
                          "', which reins does not support (2025-11-25, 2025-06-18, 2025-03-26)");
  }
  if (http_) http_->set_protocol_version(protocol_version_);
  peer->Notify("notifications/initialized", Json());
  if (http_) {
    co_await http_->Settle();  // the server must see it before tools/list
    http_->Listen();
  }
  Status listed = co_await ListTools();
  if (!listed.ok()) co_return listed;
  connected_ = true;
  started_once_ = true;
  co_return OkStatus();
}

Task<Result<Json>> McpClient::AnswerServer(std::string method, Json params) {
  if (method == "ping") co_return Json::object();
  if (method == "roots/list") co_return Json{{"roots", Json::array()}};
  if (method == "elicitation/create") {
    if (!options_.on_elicitation) co_return Json{{"action", "decline"}};
    auto alive = alive_;
    Json answer = co_await options_.on_elicitation(params);
    if (!*alive) co_return Aborted("MCP client closed");
    co_return answer;
  }
  co_return NotFound("method not found: " + method);
}

// Feeds the server's stdout to the session until it closes; then fails what is in
// flight with the server's exit status and last stderr lines.
Task<void> McpClient::ReadLoop(std::shared_ptr<bool> alive, std::shared_ptr<StdioProcess> process,
                               std::shared_ptr<JsonRpcPeer> peer, uint64_t generation) {
  StdioProcess::LineFn on_stdout = [peer](const std::string& line) { peer->Receive(line); };
  StdioProcess::LineFn on_stderr = [this, alive](const std::string& line) {
    if (!*alive) return;
    stderr_tail_.push_back(line);
    if (stderr_tail_.size() > 5) stderr_tail_.pop_front();
    Log(line);
  };
  co_await process->ReadUntilClosed(on_stdout, on_stderr);
  if (!*alive) co_return;
  std::string why = "MCP server " + server_.name + " " + process->DescribeExit();
  std::string tail = LastStderr();
  if (!tail.empty()) why += " (stderr: " + tail + ")";
  peer->FailAll(Unavailable(why));
  if (generation == generation_) {
    connected_ = false;
    Log(why);
  }
}

Task<Status> McpClient::ListTools() {
  std::vector<McpTool> tools;
  std::string cursor;
  std::shared_ptr<JsonRpcPeer> peer = peer_;
  for (int page = 0; page < 100; ++page) {
    Json params = Json::object();
    if (!cursor.empty()) params["cursor"] = cursor;
    const std::string method = "tools/list";
    Result<Json> listed = co_await peer->Call(method, std::move(params), options_.start_timeout_ms);
    if (!listed.ok()) co_return Unavailable("tools/list on MCP server " + server_.name + " failed: " + listed.status().message());
    const Json* page_tools = listed->is_object() && listed->contains("tools") ? &(*listed)["tools"] : nullptr;
    if (page_tools != nullptr && page_tools->is_array()) {
      for (const Json& t : *page_tools) {
        if (!Text(t, "name").empty()) tools.push_back(ToolFromJson(t));
      }
    }
    cursor = Text(*listed, "nextCursor");
    if (cursor.empty()) break;
  }
  tools_ = std::move(tools);
  tools_stale_ = false;
  co_return OkStatus();
}

Task<Result<Json>> McpClient::CallTool(std::string tool, Json args, JsonRpcPeer::ProgressFn on_progress,
                                      int timeout_ms) {
  uint64_t generation = generation_;
  Result<Json> result = co_await CallOnce(tool, args, on_progress, timeout_ms);
  // A forgotten HTTP session: the server never processed the call, so sending it again
  // on a new session cannot run it twice.
  if (!result.ok() && session_lost_at_ != 0 && session_lost_at_ >= generation) {
    session_lost_at_ = 0;
    result = co_await CallOnce(std::move(tool), std::move(args), std::move(on_progress), timeout_ms);
  }
  co_return result;
}

Task<Result<Json>> McpClient::CallOnce(std::string tool, Json args, JsonRpcPeer::ProgressFn on_progress,
                                      int timeout_ms) {
  if (!connected_) {
    auto now = std::chrono::steady_clock::now();
    if (started_once_ && now < retry_at_ && session_lost_at_ == 0) {
      auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(retry_at_ - now).count();
      co_return Unavailable("MCP server " + server_.name + " is down; the next restart is in " + std::to_string(wait) + " ms");
    }
    Status connected = co_await Connect();
    if (!connected.ok()) {
      backoff_ms_ = std::min(options_.max_backoff_ms, backoff_ms_ == 0 ? 200 : backoff_ms_ * 2);
      retry_at_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(backoff_ms_);
      started_once_ = true;
      co_return connected;
    }
    backoff_ms_ = 0;
  }
  if (tools_stale_) {
    if (Status listed = co_await ListTools(); !listed.ok()) Log(listed.message());
  }
  std::shared_ptr<JsonRpcPeer> peer = peer_;
  Json params = {{"name", tool}, {"arguments", args.is_object() ? args : Json::object()}};
  const std::string method = "tools/call";
  const int timeout = timeout_ms > 0 ? timeout_ms : options_.call_timeout_ms;
  Result<Json> result = co_await peer->Call(method, std::move(params), timeout, std::move(on_progress));
  co_return result;
}

Task<void> McpClient::Stop() {
  connected_ = false;
  if (std::shared_ptr<McpHttpTransport> http = http_) co_await http->Close();
  if (std::shared_ptr<StdioProcess> process = process_) co_await process->Shutdown(options_.shutdown_grace_ms);
  if (peer_) peer_->FailAll(Unavailable("MCP server " + server_.name + " was shut down"));
}

Json McpResultToToolResult(Json result) {
  std::string text;
  Json other = Json::array();
  int text_blocks = 0;
  static const Json kNoContent = Json::array();
  auto content = result.find("content");
  const Json& blocks = content != result.end() && content->is_array() ? *content : kNoContent;
  for (const Json& block : blocks) {
    auto type = block.is_object() ? block.find("type") : block.end();
    if (type != block.end() && *type == "text") {
      auto t = block.find("text");
      if (!text.empty()) text += "\n";
      if (t != block.end() && t->is_string()) text += t->get_ref<const std::string&>();
      ++text_blocks;
    } else {
      other.push_back(block);
    }
  }
  if (auto e = result.is_object() ? result.find("isError") : result.end(); e != result.end() && *e == true) {
    return {{"success", false}, {"next_action", "error"}, {"error", text.empty() ? "the MCP tool failed" : text}};
  }
  Json data;
  if (result.contains("structuredContent") && !result["structuredContent"].is_null()) {
    data = std::move(result["structuredContent"]);
  } else if (text_blocks == 1 && other.empty()) {
    Json parsed = ParseJsonOrDiscarded(text);
    data = parsed.is_discarded() ? Json{{"text", text}} : parsed;
  } else {
    data = Json::object();
    if (!text.empty()) data["text"] = text;
  }
  if (!other.empty() && data.is_object()) data["content"] = other;
  if (data.is_object() && (data.contains("success") || data.contains("next_action"))) return data;
  return {{"success", true}, {"next_action", "continue"}, {"data", data}};
}

}  // namespace reins
