// `reins serve`: the HTTP API (docs/http-api.md) over one agent, on `--threads` event
// loops, one a thread (EventLoops): each connection is given to a loop when accepted
// and the turns it brings run there, so sessions run in parallel on the threads while
// the runtime's session queue keeps each session's turns one at a time, in order.
// SIGINT/SIGTERM: stop accepting, let in-flight turns finish up to
// --shutdown-timeout-ms, exit 0; writes still queued stay in the outbox and run at the
// next start.
#include <malloc.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "cli/commands.h"
#include "host/runtime_parts.h"
#include "config/agent_config_loader.h"
#include "domain/detail_log.h"
#include "host/agent_host.h"
#include "net/event_loops.h"
#include "net/open_files.h"
#include "reins/clock.h"
#include "server/api.h"
#include "telemetry/otlp_exporter.h"

namespace reins {
namespace {

namespace asio = boost::asio;

bool IsLoopback(const std::string& host) { return host == "127.0.0.1" || host == "::1" || host == "localhost"; }

bool SplitListen(const std::string& listen, std::string* host, int* port) {
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos) return false;
  *host = listen.substr(0, colon);
  if (host->size() > 2 && host->front() == '[') *host = host->substr(1, host->size() - 2);
  try {
    *port = std::stoi(listen.substr(colon + 1));
  } catch (...) {
    return false;
  }
  if (*host == "localhost") *host = "127.0.0.1";
  return *port >= 0 && *port < 65536;
}

// glibc hands the top of the heap back to the kernel whenever 128 KB are free there. A
// server whose turns come and go then shrinks and regrows its heap many times a second:
// each shrink a brk call and a TLB flush on every CPU the process ran on, each regrowth
// a page fault per page. At 64 turns in flight, keeping up to 64 MB of free heap (and
// growing it a megabyte at a time) took 30 % off the server's CPU per turn and gave 1.4x
// the turns per second (docs/PERFORMANCE.md, round 7). RSS then stays near its peak.
void KeepFreedHeap() {
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
  mallopt(M_TOP_PAD, 1 << 20);
}

void LogLine(Json entry) {
  entry["ts"] = FormatIsoTime(SystemClock().NowMs());
  std::cerr << entry.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n" << std::flush;
}

Task<void> ResumeOutbox(Runtime& runtime) {
  Result<int> ran = co_await runtime.ResumeOutbox();
  if (ran.ok() && *ran > 0) std::cerr << "reins serve: ran " << *ran << " write(s) a previous run left in the outbox\n";
}

// On a shared store a replica may die with writes in the outbox and never come back:
// every minute each replica runs what has sat untouched for 30 s. A claim makes each
// entry run once; one still `running` is taken over only after the store's lapse.
Task<void> SweepPeersOutbox(Runtime& runtime, std::shared_ptr<Clock> clock) {
  for (;;) {
    co_await clock->Sleep(60'000);
    Result<int> ran = co_await runtime.ResumeOutbox(30'000);
    if (ran.ok() && *ran > 0) std::cerr << "reins serve: ran " << *ran << " write(s) another replica left in the outbox\n";
  }
}

Task<void> ShutDownOnSignal(asio::signal_set& signals, Api& api, HttpServer& server, EventLoops& loops, int deadline_ms) {
  auto [ec, signal] = co_await signals.async_wait(asio::as_tuple(asio::use_awaitable));
  if (ec) co_return;
  std::cerr << "reins serve: " << (signal == SIGINT ? "SIGINT" : "SIGTERM")
            << ": no new requests; waiting up to " << deadline_ms << " ms for those in flight\n";
  api.BeginShutdown();
  server.Stop();
  co_await server.Drain(deadline_ms);
  std::cerr << "reins serve: stopped (" << server.open_connections() << " connection(s) cut at the deadline)\n";
  loops.Stop();
}

}  // namespace

int ServeCommand(const ServeFlags& flags) {
  RaiseOpenFileLimit();
  KeepFreedHeap();
  // What clients are not told (internal URLs, upstream bodies) goes to the log.
  SetDetailSink([](std::string_view source, std::string_view message) {
    LogLine({{"level", "warn"}, {"msg", "detail"}, {"source", source}, {"detail", message}});
  });
  Result<AgentConfig> config = LoadAgentConfigFile(flags.config);
  if (!config.ok()) {
    std::cerr << config.status().message() << "\n";
    return 2;
  }
  std::string host;
  int port = 0;
  if (!SplitListen(flags.listen, &host, &port)) {
    std::cerr << "--listen must be HOST:PORT (e.g. 127.0.0.1:8080), got '" << flags.listen << "'\n";
    return 2;
  }
  std::shared_ptr<const KeyStore> keys;
  if (!flags.keys.empty()) {
    Result<KeyStore> loaded = KeyStore::Load(flags.keys);
    if (!loaded.ok()) {
      std::cerr << loaded.status().message() << "\n(create keys with: reins keys add TENANT --keys " << flags.keys << ")\n";
      return 2;
    }
    keys = std::make_shared<const KeyStore>(std::move(*loaded));
  } else if (!IsLoopback(host)) {
    std::cerr << "without --keys the server only listens on loopback (127.0.0.1 or ::1); create keys with "
                 "reins keys add TENANT, then pass --keys keys.yaml\n";
    return 2;
  }
  auto clock = std::make_shared<SystemClock>();
  std::string store_url = flags.store.empty() ? config->store : flags.store;
  Result<RuntimeParts> made = MakeRuntimeParts(*config, flags.store, clock);
  if (!made.ok()) {
    std::cerr << made.status().message() << "\n";
    return 2;
  }
  Api* api_ptr = nullptr;            // set below; events only flow once the server runs
  EventRelay* relay_ptr = nullptr;   // replicas on a shared store: events to the others
  RuntimeParts parts = std::move(made).value();
  Store* store = parts.store.get();  // owned by the runtime, which outlives the server
  const bool shared_store = store->shared();
  parts.session_cache = flags.session_cache;
  parts.on_event = [&api_ptr, &relay_ptr](const std::string& session, const TraceEvent& e) {
    if (api_ptr) api_ptr->OnRuntimeEvent(session, e);
    if (relay_ptr) relay_ptr->Publish(session, e);
  };
  // The agent with its MCP servers (started before the runtime, stopped after it); a
  // server's changed tool list applies to the turns that start once it is announced.
  // The servers' stderr goes to the server's log, one JSON line each, like requests.
  HostOptions host_options{.mcp_log = [](const std::string& line) { LogLine({{"level", "info"}, {"msg", "mcp"}, {"line", line}}); }};
  Result<std::unique_ptr<AgentHost>> agent = AgentHost::Start(*config, clock, std::move(host_options));
  if (!agent.ok()) {
    std::cerr << agent.status().message() << "\n";
    return 2;
  }
  Result<Runtime*> runtime = (*agent)->StartRuntime(std::move(parts));
  if (!runtime.ok()) {
    std::cerr << runtime.status().message() << "\n";
    return 2;
  }
  int exit_code = 0;
  {
    const int threads = flags.threads > 0 ? flags.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    EventLoops loops(threads);
    asio::io_context& io = loops.first();
    const asio::any_io_executor first_loop = io.get_executor();
    Metrics metrics;
    HttpServer* server_ptr = nullptr;
    ApiOptions options{.rate_per_second = flags.rate, .rate_burst = flags.burst, .heartbeat_ms = flags.heartbeat_ms};
    options.open_connections = [&server_ptr] { return server_ptr ? server_ptr->open_connections() : 0; };
    options.collect_metrics = [exporter = (*agent)->exporter(), runtime = *runtime](Metrics& m) {
      // MCP tools the agent's lock no longer matches: the log and each turn.started name them.
      double withheld = 0;
      for (const ToolDef& t : runtime->config()->tools) withheld += t.withheld.empty() ? 0 : 1;
      m.Set("reins_mcp_tools_withheld", {}, withheld);
      if (exporter) {
        const telemetry::ExportCounts c = exporter->counts();
        m.Set("reins_telemetry_spans_exported_total", {}, static_cast<double>(c.exported));
        m.Set("reins_telemetry_spans_dropped_total", {{"reason", "queue_full"}}, static_cast<double>(c.dropped_queue_full));
        m.Set("reins_telemetry_spans_dropped_total", {{"reason", "export_failed"}}, static_cast<double>(c.dropped_export_failed));
        m.Set("reins_telemetry_spans_dropped_total", {{"reason", "collector_down"}}, static_cast<double>(c.dropped_collector_down));
      }
    };
    options.max_inflight = flags.max_inflight;
    options.max_trace_reads = flags.max_trace_reads;
    options.allowed_origins = flags.allow_origins;
    options.allowed_hosts = flags.allow_hosts;
    Api api(**runtime, first_loop, keys, metrics, options);
    api_ptr = &api;
    HttpServer::Options http{.host = host, .port = port, .max_body_bytes = flags.max_body_bytes};
    http.max_connections = flags.max_connections;
    if (loops.size() > 1) http.loops = loops.all();
    http.on_refused = [&metrics](std::string_view reason) {
      metrics.Inc("reins_connections_refused_total", {{"reason", reason}});
    };
    HttpServer server(io, std::move(http),
                      [&api](const ServerRequest& req, ServerResponse& res) { return api.Handle(req, res); });
    server_ptr = &server;
    if (Status s = server.Start(); !s.ok()) {
      std::cerr << s.message() << "\n";
      return 2;
    }
    // What other replicas' turns produce reaches this replica's session event streams.
    Result<std::unique_ptr<EventRelay>> relay =
        store->RelayEvents([&api](const std::string& session, const TraceEvent& e) { api.OnPeerEvent(session, e); });
    if (!relay.ok()) {
      std::cerr << relay.status().message() << "\n";
      return 2;
    }
    relay_ptr = relay->get();
    asio::co_spawn(first_loop, ResumeOutbox(**runtime), asio::detached);
    if (shared_store) asio::co_spawn(first_loop, SweepPeersOutbox(**runtime, clock), asio::detached);
    asio::signal_set signals(io, SIGINT, SIGTERM);
    asio::co_spawn(io, ShutDownOnSignal(signals, api, server, loops, flags.shutdown_timeout_ms), asio::detached);
    // Every I/O deadline of a quiet server (30 s and more) would be the earliest one
    // pending, and Asio sets the kernel's timer for each: 9 system calls a sequential
    // served turn, 2.7 % of its CPU (docs/PERFORMANCE.md, round 7).
    std::vector<std::unique_ptr<TimerFloor>> timer_floors;  // one a loop, held until the loops stop
    for (asio::io_context* loop : loops.all()) timer_floors.push_back(std::make_unique<TimerFloor>(loop->get_executor()));
    const std::string origin =
        "http://" + (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(server.port());
    // One line: tests and benches read the port from it.
    std::cout << "reins serve: " << config->name << " listening on " << origin
              << (keys ? " (API keys required)" : " (loopback only, no API keys: pass --keys to require them)")
              << (store_url == "sqlite::memory:" ? "; sessions are in memory (pass --store sqlite:reins.db to keep them)" : "")
              << "; trace viewer: " << origin << "/ui/" << std::endl;
    loops.Run();
    api_ptr = nullptr;
    relay_ptr = nullptr;
    (*agent)->StopServers();  // before the loops go: an open MCP call holds its executor
  }
  return exit_code;
}

}  // namespace reins
