#include "mcp/mcp_hub.h"

#include <future>
#include <iostream>
#include <mutex>
#include <optional>
#include <set>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include "schema/schema_validator.h"

namespace reins {
namespace {

// Runs on the hub's thread. (co_spawn needs a default-constructible result.)
Task<std::optional<Result<Json>>> CallOnHub(std::weak_ptr<McpClient> weak, std::shared_ptr<McpCallDesk> desk,
                                            McpCallRequest request) {
  std::shared_ptr<McpClient> client = weak.lock();
  if (!client) co_return Result<Json>(Unavailable("the MCP servers were shut down"));
  Result<Json> result = co_await desk->Call(std::move(client), std::move(request));
  co_return result;
}

// (A plain function: GCC 12 miscompiles some aggregate initialisers in coroutines.)
McpCallRequest CallFor(const std::string& tool, const ToolRequest& request, JsonRpcPeer::ProgressFn on_progress,
                       std::shared_ptr<McpCallHandle> handle) {
  McpCallRequest call;
  call.tool = tool;
  call.args = request.args;
  call.session_id = request.session_id;
  call.may_ask = request.may_ask;
  call.answer = request.answer;
  call.timeout_ms = request.timeout_ms;
  call.on_progress = std::move(on_progress);
  call.handle = std::move(handle);
  return call;
}

// What a call on the hub's thread may still do on the caller's side once the caller
// has moved on: nothing. Progress is delivered only while the call is open.
struct CallerSide {
  std::mutex mu;
  bool open = true;
  std::function<void(const Json&)> on_progress;
};

// Where a result from the hub's thread lands on the caller's side.
struct Handoff {
  explicit Handoff(boost::asio::any_io_executor ex) : timer(std::move(ex)) {}
  boost::asio::steady_timer timer;
  std::optional<Result<Json>> result;
};

// One MCP tool as a reins tool backend. It holds the client weakly: the hub owns the
// clients and destroys them on its own thread.
class McpBackend final : public ToolBackend {
 public:
  McpBackend(boost::asio::any_io_executor hub, std::weak_ptr<McpClient> client, std::shared_ptr<McpCallDesk> desk,
             std::string tool, Clock& clock)
      : hub_(std::move(hub)), client_(std::move(client)), desk_(std::move(desk)), tool_(std::move(tool)), clock_(clock) {}

  Task<Result<Json>> Invoke(const ToolRequest& request) override {
    RealWorkScope real(clock_);  // simulated time waits for the server
    auto caller = co_await boost::asio::this_coro::executor;
    auto side = std::make_shared<CallerSide>();
    side->on_progress = request.on_progress;
    JsonRpcPeer::ProgressFn on_progress;
    if (side->on_progress) {
      on_progress = [caller, side](const Json& params) {  // on the hub's thread
        boost::asio::post(caller, [side, params] {
          std::lock_guard<std::mutex> lock(side->mu);
          if (side->open) side->on_progress(params);
        });
      };
    }
    // The call runs on the hub's thread; its result comes back by a post to this
    // executor, waking a timer this coroutine waits on. (A pending wait is work of this
    // io_context, and nothing of the hub's is left to post here once Invoke returns.)
    auto handle = std::make_shared<McpCallHandle>();
    auto handoff = std::make_shared<Handoff>(caller);
    handoff->timer.expires_at(boost::asio::steady_timer::time_point::max());
    boost::asio::co_spawn(hub_, CallOnHub(client_, desk_, CallFor(tool_, request, std::move(on_progress), handle)),
                          // `handoff` (a timer of the caller's io_context) moves into the post:
                          // the hub's thread must not be the one to destroy it.
                          [caller, handoff](std::exception_ptr e, std::optional<Result<Json>> r) mutable {
                            auto got = std::make_shared<Result<Json>>(
                                e || !r ? Result<Json>(Internal("the MCP call failed inside reins")) : std::move(*r));
                            boost::asio::post(caller, [handoff = std::move(handoff), got] {
                              handoff->result = std::move(*got);
                              handoff->timer.cancel();
                            });
                          });
    auto [woken] = co_await handoff->timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    (void)woken;
    if (!handoff->result) {
      // The caller gave up (a deferred call's timeout): the server hears
      // notifications/cancelled, and the desk answers Aborted at once; that answer is
      // awaited, without cancellation, so no post outlives this call.
      boost::asio::post(hub_, [desk = desk_, handle] { desk->Abandon(handle); });
      // A cancelled coroutine throws at its next co_await unless its state is reset.
      co_await boost::asio::this_coro::reset_cancellation_state();
      while (!handoff->result) {
        handoff->timer.expires_at(boost::asio::steady_timer::time_point::max());
        auto [settled] = co_await handoff->timer.async_wait(
            boost::asio::bind_cancellation_slot(boost::asio::cancellation_slot(),
                                                boost::asio::as_tuple(boost::asio::use_awaitable)));
        (void)settled;
      }
    }
    {
      std::lock_guard<std::mutex> lock(side->mu);
      side->open = false;
    }
    co_return std::move(*handoff->result);
  }

  bool ResumesQuestions() const override { return true; }
  // MCP has no trace context of its own: a call carries none.
  bool ForwardsTraceContext() const override { return false; }

  void Withdraw(const std::string& session_id) override {
    boost::asio::post(hub_, [desk = desk_, session_id] { desk->Withdraw(session_id); });
  }

 private:
  boost::asio::any_io_executor hub_;
  std::weak_ptr<McpClient> client_;
  std::shared_ptr<McpCallDesk> desk_;
  std::string tool_;
  Clock& clock_;
};

std::string ServerOf(const ToolDef& t) { return t.backend.spec.value("server", ""); }
std::string RemoteName(const ToolDef& t) { return t.backend.spec.value("tool", t.name); }

void ApplyAnnotations(ToolDef& t) {
  const Json& a = t.annotations;
  // Only booleans count: a hint of another type is as good as absent.
  bool read_only = a.contains("readOnlyHint") && a["readOnlyHint"] == true;
  bool explicitly_writes = a.contains("readOnlyHint") && a["readOnlyHint"] == false;
  if (!t.configured.count("timing")) t.timing = explicitly_writes ? ToolTiming::kDeferred : ToolTiming::kImmediate;
  if (!t.configured.count("approval")) t.approval.required = !read_only && a.contains("destructiveHint") && a["destructiveHint"] == true;
  // Untrusted unless the server says the tool reads no open world (AGENT-CONFIG.md).
  const bool closed_world = a.contains("openWorldHint") && a["openWorldHint"] == false;
  if (!t.configured.count("trust")) t.trust = closed_world ? ToolTrust::kTrusted : ToolTrust::kUntrusted;
}

void Fill(ToolDef& t, const McpTool& remote) {
  if (!t.configured.count("title")) {
    if (!remote.title.empty()) t.title = remote.title;
  }
  if (!t.configured.count("description")) t.description = remote.description;
  if (!t.configured.count("input_schema")) t.input_schema = remote.input_schema;
  if (!t.configured.count("annotations")) t.annotations = remote.annotations;
  if (!t.configured.count("failure_note")) t.failure_note = DefaultFailureNote(t.title);
  ApplyAnnotations(t);
}

}  // namespace

Status ApplyMcpCatalog(AgentConfig& config, const std::string& server, bool expose_all, const std::vector<McpTool>& tools,
                       const McpLock* lock) {
  std::vector<std::string> problems;
  // A tool the lock does not match keeps only what the config gave it: none of the
  // server's words reach the model, nor its annotations the tool's timing and trust.
  auto withheld = [&](const McpTool& remote) { return lock == nullptr ? std::string() : lock->Change(server, remote); };
  std::set<std::string> used;
  auto find = [&](const std::string& name) -> const McpTool* {
    for (const McpTool& t : tools) {
      if (t.name == name) return &t;
    }
    return nullptr;
  };
  for (ToolDef& t : config.tools) {
    if (t.backend.kind != ToolBackendConfig::Kind::kMcp || ServerOf(t) != server) continue;
    const McpTool* remote = find(RemoteName(t));
    if (remote == nullptr) {
      std::string offered;
      for (const McpTool& r : tools) offered += (offered.empty() ? "" : ", ") + r.name;
      problems.push_back("tool " + t.name + ": MCP server " + server + " offers no tool '" + RemoteName(t) +
                         "' (it offers: " + offered + ")");
      continue;
    }
    used.insert(remote->name);
    t.withheld = withheld(*remote);
    if (t.withheld.empty()) Fill(t, *remote);
  }
  if (expose_all) {
    for (const McpTool& remote : tools) {
      if (used.count(remote.name) || config.FindTool(remote.name) != nullptr) continue;
      if (!IsValidToolName(remote.name)) {
        problems.push_back("MCP server " + server + " offers tool '" + remote.name +
                           "', whose name is not a valid reins tool name; name it in the config with backend.mcp.tool");
        continue;
      }
      ToolDef t;
      t.name = remote.name;
      t.title = DefaultToolTitle(t.name);
      t.deferred_instruction = kDefaultDeferredInstruction;
      t.backend.kind = ToolBackendConfig::Kind::kMcp;
      t.backend.spec = {{"server", server}, {"tool", remote.name}};
      t.withheld = withheld(remote);
      if (t.withheld.empty()) Fill(t, remote);
      config.tools.push_back(std::move(t));
    }
  }
  for (const ToolDef& t : config.tools) {
    if (t.backend.kind != ToolBackendConfig::Kind::kMcp || ServerOf(t) != server || !t.withheld.empty()) continue;
    if (auto compiled = SchemaValidator::Compile(t.input_schema); !compiled.ok()) {
      problems.push_back("tool " + t.name + ": the input schema from MCP server " + server +
                         " does not compile: " + compiled.status().message());
    }
    const Json properties = t.input_schema.value("properties", Json::object());
    for (const auto& [arg, type] : t.consumes) {
      if (!properties.contains(arg)) {
        problems.push_back("tool " + t.name + ": entities.consumes names '" + arg + "', which is not an argument of " +
                           RemoteName(t) + " on MCP server " + server);
      }
    }
  }
  if (problems.empty()) return OkStatus();
  std::string message;
  for (const std::string& p : problems) message += p + "\n";
  return InvalidArgument(message);
}

McpHub::McpHub(McpClientOptions options)
    : options_(std::move(options)),
      work_(boost::asio::make_work_guard(io_)),
      desk_(std::make_shared<McpCallDesk>(io_.get_executor())),
      thread_([this] { io_.run(); }) {}

McpHub::~McpHub() {
  Stop();
  work_.reset();
  thread_.join();
}

bool McpHub::Needed(const AgentConfig& config) {
  for (const McpServerConfig& s : config.mcp_servers) {
    if (s.expose_all) return true;
  }
  for (const ToolDef& t : config.tools) {
    if (t.backend.kind == ToolBackendConfig::Kind::kMcp) return true;
  }
  return false;
}

Status McpHub::Start(AgentConfig& config) {
  std::future<Status> started = boost::asio::co_spawn(io_, StartAll(&config), boost::asio::use_future);
  return started.get();
}

Task<Status> McpHub::StartAll(AgentConfig* config_ptr) {
  AgentConfig& config = *config_ptr;
  base_ = config;
  std::vector<std::string> problems;
  for (const McpServerConfig& server : config.mcp_servers) {
    bool used = server.expose_all;
    for (const ToolDef& t : config.tools) used = used || (t.backend.kind == ToolBackendConfig::Kind::kMcp && ServerOf(t) == server.name);
    if (!used) continue;
    McpClientOptions options = options_;
    options.on_tools_changed = [this, name = server.name] {  // on the hub's thread
      {
        std::lock_guard lock(pending_mu_);
        ++pending_;
      }
      boost::asio::co_spawn(io_, Reapply(name), boost::asio::detached);
    };
    if (!options.on_elicitation) {
      options.on_elicitation = [desk = desk_, name = server.name](const Json& params) { return desk->Elicit(name, params); };
    }
    auto client = std::make_shared<McpClient>(io_.get_executor(), server, std::move(options));
    clients_[server.name] = client;
    if (Status started = co_await client->Start(); !started.ok()) problems.push_back(started.message());
  }
  // Every problem at once: those of the servers that started, too.
  if (Status applied = ApplyCatalogs(config); !applied.ok()) problems.push_back(applied.message());
  if (problems.empty()) {
    SayWithheld(config);
    co_return OkStatus();
  }
  std::string message;
  for (const std::string& p : problems) message += p + (p.empty() || p.back() == '\n' ? "" : "\n");
  co_return Unavailable(message);
}

// A server announced a new tool list: list it (unless a call listed it meanwhile),
// complete a fresh config from every server's list and hand it on.
Task<void> McpHub::Reapply(std::string server) {
  auto it = clients_.find(server);
  if (it != clients_.end() && !stopped_) {
    std::shared_ptr<McpClient> client = it->second;
    Status listed;  // (no co_await inside ?: with GCC 12)
    if (client->tools_stale()) listed = co_await client->Relist();
    AgentConfig config = base_;
    Status applied = listed.ok() ? ApplyCatalogs(config) : listed;
    if (!listed.ok()) {
      if (options_.log) options_.log("[mcp " + server + "] " + listed.message());
    } else if (!applied.ok()) {
      if (options_.log) options_.log("[mcp] the changed tool list does not fit the agent; keeping the old one: " + applied.message());
    } else if (on_catalog_) {
      SayWithheld(config);
      on_catalog_(std::move(config));
    }
  }
  std::lock_guard lock(pending_mu_);
  --pending_;
  settled_.notify_all();
}

void McpHub::AwaitCatalog() {
  std::unique_lock lock(pending_mu_);
  settled_.wait(lock, [this] { return pending_ == 0; });
}

// Every running server's tool list, applied to `config` in the config's order; the
// error names the problems of every server.
Status McpHub::ApplyCatalogs(AgentConfig& config) const {
  // Read at each application: a lock written while the agent runs (`reins check --pin`)
  // holds from the next tool-list change.
  std::optional<McpLock> lock;
  if (!lock_path_.empty()) {
    Result<std::optional<McpLock>> read = ReadMcpLock(lock_path_);
    if (!read.ok()) return read.status();
    lock = std::move(*read);
  }
  std::string problems;
  for (const McpServerConfig& server : config.mcp_servers) {
    auto it = clients_.find(server.name);
    if (it == clients_.end()) continue;
    if (!it->second->connected() && it->second->tools().empty()) continue;  // it never started
    Status applied = ApplyMcpCatalog(config, server.name, server.expose_all, it->second->tools(), lock ? &*lock : nullptr);
    if (!applied.ok()) problems += applied.message();
    for (ToolDef& t : config.tools) {  // exposed tools, unnamed in the config: the server's timeout
      if (t.backend.kind != ToolBackendConfig::Kind::kMcp || ServerOf(t) != server.name) continue;
      if (!t.configured.contains("timeout_ms")) t.timeout_ms = server.timeout_ms;
    }
  }
  if (problems.empty()) return OkStatus();
  return InvalidArgument(problems);
}

// Each withheld tool, on the MCP log (else stderr): the person who reviews tools
// learns which one to look at and how to accept it.
void McpHub::SayWithheld(const AgentConfig& config) const {
  for (const ToolDef& t : config.tools) {
    if (t.withheld.empty()) continue;
    const std::string line = "[mcp " + ServerOf(t) + "] tool " + t.name + " is withheld from the model: " + t.withheld +
                             " (" + lock_path_ + "). Review the server's tool, then run `reins check --pin` on the agent.";
    if (options_.log) {
      options_.log(line);
    } else {
      std::cerr << "reins: " << line << "\n";
    }
  }
}

std::map<std::string, std::vector<McpTool>> McpHub::Listed() {
  std::future<std::map<std::string, std::vector<McpTool>>> listed = boost::asio::co_spawn(
      io_,
      [this]() -> Task<std::map<std::string, std::vector<McpTool>>> {
        std::map<std::string, std::vector<McpTool>> out;
        for (const auto& [name, client] : clients_) {
          if (client->connected() || !client->tools().empty()) out[name] = client->tools();
        }
        co_return out;
      },
      boost::asio::use_future);
  return listed.get();
}

std::shared_ptr<ToolBackend> McpHub::Backend(const ToolDef& tool, Clock& clock) const {
  if (tool.backend.kind != ToolBackendConfig::Kind::kMcp) return nullptr;
  auto it = clients_.find(ServerOf(tool));
  if (it == clients_.end()) return nullptr;
  return std::make_shared<McpBackend>(io_.get_executor(), it->second, desk_, RemoteName(tool), clock);
}

std::map<std::string, std::shared_ptr<ToolBackend>> McpHub::Backends(const AgentConfig& config, Clock& clock) const {
  std::map<std::string, std::shared_ptr<ToolBackend>> out;
  for (const ToolDef& t : config.tools) {
    if (std::shared_ptr<ToolBackend> backend = Backend(t, clock)) out[t.name] = std::move(backend);
  }
  return out;
}

void McpHub::Stop() {
  if (stopped_) return;
  stopped_ = true;
  std::future<void> stopped = boost::asio::co_spawn(io_, StopAll(), boost::asio::use_future);
  stopped.get();
}

// Every server shut down as the spec says and reaped; the clients destroyed here, on
// the thread their pipes belong to.
Task<void> McpHub::StopAll() {
  desk_->CancelAll();
  for (auto& [name, client] : clients_) co_await client->Stop();
  clients_.clear();
}

}  // namespace reins
