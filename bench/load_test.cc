// A bounded load test of `reins serve`: the real binary on loopback, its model a local
// mock upstream (OpenAI wire format) that answers after an artificial delay. For each
// N it opens N sessions, then runs one turn in each, all N in flight at once, and
// reports turns/s, the latency reins adds on top of the model's delay (p50, p99), the
// server's peak RSS and its RSS per open session.
//
//   build-release/bench/reins_load [--delay-ms 200] [--store URL|postgres] [--replicas K] [--threads T] [--tools]
//                                  [--in-flight W] [--embedded [--start-sessions]] [N ...]
//
// --tools gives the agent three tools (bench/load/agent-tools.yaml) and has the model
// call one in every turn before it answers: two model calls per turn, each after the
// delay, and the added latency is then the client's time less twice the delay.
// --in-flight W runs the turns W at a time instead of all N at once (1: one after
// another, as a quiet hour sends them). --embedded runs the same turns in this process
// instead, the way a program that links the library does (no reins serve, no HTTP to
// it; the model is still the mock over HTTP): the RSS columns are then this process's.
// With --start-sessions each embedded turn begins its own session (Runtime::StartSession,
// written in the turn's commit) instead of running in one created before the run.
// N defaults to 1000 10000. --store gives reins serve a store (default the agent's,
// sqlite::memory:); `postgres` starts a throwaway PostgreSQL server (as the tests do)
// and gives each N a fresh database. --replicas K starts K reins serve processes on the
// one store and sends the requests to them in turn, as a load balancer without sticky
// sessions would; RSS is then the replicas' sum. --threads T gives each reins serve T
// event loops (default: one per core).

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "config/agent_config_loader.h"
#include "host/agent_host.h"
#include "host/runtime_parts.h"
#include "net/http_client.h"
#include "net/open_files.h"
#include "peer_job/child_process.h"
#include "reins/json.h"
#include "server/server_process.h"
#include "support/mock_payloads.h"
#include "support/mock_upstream.h"
#include "support/test_postgres.h"

namespace {

using namespace reins;
using Clock = std::chrono::steady_clock;
using peer_job::StatusKiB;

// Runs `n` requests with at most `width` in flight; returns each one's latency (ms).
std::vector<double> RunAll(int n, int width, const std::function<HttpRequest(int)>& make, std::vector<Json>* bodies) {
  boost::asio::io_context io;
  HttpClient::Options options;
  options.max_idle_per_origin = static_cast<size_t>(width);
  HttpClient client(options);
  std::vector<double> latency(n, -1);
  if (bodies) bodies->assign(n, Json());
  int next = 0;
  auto worker = [&]() -> Task<void> {
    while (next < n) {
      int i = next++;
      auto start = Clock::now();
      auto r = co_await client.Send(make(i));
      latency[i] = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      if (!r.ok() || r->status >= 300) {
        std::cerr << "request " << i << " failed: " << (r.ok() ? r->body : r.status().message()) << "\n";
        latency[i] = -1;
      } else if (bodies) {
        (*bodies)[i] = Json::parse(r->body, nullptr, false);
      }
    }
  };
  for (int w = 0; w < width; ++w) boost::asio::co_spawn(io, worker(), boost::asio::detached);
  io.run();
  return latency;
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

struct Setup {
  int delay_ms = 200;
  std::string store;  // "" (the agent's), a URL, or "postgres"
  int replicas = 1;
  int threads = 0;  // reins serve's --threads; 0: its default, one per core
  bool tools = false;
  int in_flight = 0;  // 0: all at once
  bool embedded = false;
  bool start_sessions = false;  // embedded: each turn begins its session
  std::unique_ptr<testing::TestPostgres> postgres;
};

// The model of --tools: a call of one of the agent's tools, chosen by the turn's
// question, then an answer once the tool's result is the last message.
testing::MockReply ToolTurnReply(const testing::RecordedRequest& request, int delay_ms) {
  const Json body = Json::parse(request.body, nullptr, false);
  const Json messages = body.is_object() ? body.value("messages", Json::array()) : Json::array();
  const bool after_tool = messages.is_array() && !messages.empty() && messages.back().value("role", "") == "tool";
  testing::MockTurn turn;
  if (after_tool) {
    turn.text = "Your order is on its way and should arrive on Thursday.";
  } else {
    const std::string asked = messages.is_array() && !messages.empty() ? messages.back().value("content", "") : "";
    if (asked.find("order") != std::string::npos) {
      turn.calls.push_back({"call_1", "find_order", R"({"order_id":"A-1042"})"});
    } else if (asked.find("parcel") != std::string::npos) {
      turn.calls.push_back({"call_1", "track_parcel", R"({"carrier":"post","tracking":"RR123456785DE"})"});
    } else {
      turn.calls.push_back({"call_1", "list_returns", R"({"customer":"c-77","limit":5})"});
    }
  }
  // With fields the real API adds besides, which reins reads past.
  Json whole = Json::parse(testing::OpenAIResponse(turn));
  whole["choices"][0]["message"]["annotations"] = Json::array();
  whole["service_tier"] = "default";
  whole["system_fingerprint"] = "fp_load";
  testing::MockReply reply = testing::MockUpstream::Json(200, whole.dump(), {{"x-request-id", "req_load"}});
  reply.first_byte_delay_ms = delay_ms;
  return reply;
}

// The model's answers for n turns, and the agent that asks for them.
const char* ScriptModel(testing::MockUpstream& upstream, int n, const Setup& setup) {
  const int delay_ms = setup.delay_ms;
  if (setup.tools) {
    upstream.Respond([delay_ms](const testing::RecordedRequest& r) { return ToolTurnReply(r, delay_ms); });
  } else {
    for (int i = 0; i < n; ++i) {
      testing::MockReply reply = testing::MockUpstream::Json(200, testing::OpenAIResponse({"Hello.", {}}));
      reply.first_byte_delay_ms = delay_ms;
      upstream.Enqueue(std::move(reply));
    }
  }
  setenv("REINS_LOAD_UPSTREAM", (upstream.base_url() + "/v1").c_str(), 1);
  return setup.tools ? "bench/load/agent-tools.yaml" : "bench/load/agent.yaml";
}

std::string Question(int i, const Setup& setup) {
  static const char* const kAsked[] = {"Where is my order?", "Has my parcel left the depot yet?",
                                       "Which of my returns are still open?"};
  return setup.tools ? kAsked[i % 3] : "Hello?";
}

// Prints one row; false when a turn failed (each failure was said on stderr).
bool PrintRow(int n, const std::vector<double>& latency, double wall_s, long peak_kib, double kib_per_session,
              const Setup& setup) {
  const int model_calls = setup.tools ? 2 : 1;
  std::vector<double> added;
  for (double l : latency) {
    if (l >= 0) added.push_back(l - setup.delay_ms * model_calls);
  }
  std::printf("| %6d | %5zu | %8.0f | %8.1f | %8.1f | %7.1f | %8.2f |\n", n, added.size(), static_cast<double>(added.size()) / wall_s,
              Percentile(added, 0.50), Percentile(added, 0.99), static_cast<double>(peak_kib) / 1024.0, kib_per_session);
  std::fflush(stdout);
  return added.size() == latency.size();
}

// --embedded: sessions and turns through a Runtime of this process's own. False when
// anything failed.
bool RunEmbedded(int n, const Setup& setup) {
  testing::MockUpstream upstream;
  const char* agent = ScriptModel(upstream, n, setup);
  Result<AgentConfig> config = LoadAgentConfigFile(agent);
  auto clock = std::make_shared<SystemClock>();
  // An empty --store: the agent's own, as reins serve would open.
  Result<RuntimeParts> parts = config.ok() ? MakeRuntimeParts(*config, setup.store, clock)
                                           : Result<RuntimeParts>(config.status());
  Result<std::unique_ptr<AgentHost>> host = parts.ok() ? AgentHost::Start(*config, clock)
                                                       : Result<std::unique_ptr<AgentHost>>(parts.status());
  Result<Runtime*> runtime = host.ok() ? (*host)->StartRuntime(std::move(parts).value()) : Result<Runtime*>(host.status());
  if (!runtime.ok()) {
    std::cerr << "cannot start the runtime: " << runtime.status().message() << "\n";
    return false;
  }
  const long base_kib = StatusKiB(getpid(), "VmRSS:");
  std::vector<std::string> sessions(n);
  for (int i = 0; i < n && !setup.start_sessions; ++i) {
    Result<std::string> id = (*runtime)->CreateSession();
    if (!id.ok()) {
      std::cerr << "cannot create a session: " << id.status().message() << "\n";
      return false;
    }
    sessions[i] = *std::move(id);
  }
  const long sessions_kib = StatusKiB(getpid(), "VmRSS:");
  const int width = setup.in_flight > 0 ? std::min(n, setup.in_flight) : n;
  std::vector<double> latency(n, -1);
  int next = 0;
  boost::asio::io_context io;
  auto worker = [&]() -> Task<void> {
    while (next < n) {
      const int i = next++;
      const auto start = Clock::now();
      TurnInput input;
      input.say = Question(i, setup);
      Result<TurnResult> turn = Internal("not run");
      if (setup.start_sessions) {
        Result<StartedSession> started = co_await (*runtime)->StartSession(std::move(input));
        turn = started.ok() ? Result<TurnResult>(std::move(started->turn)) : Result<TurnResult>(started.status());
      } else {
        turn = co_await (*runtime)->RunTurn(sessions[i], std::move(input));
      }
      if (turn.ok()) {
        latency[i] = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      } else {
        std::cerr << "turn " << i << " failed: " << turn.status().message() << "\n";
      }
    }
  };
  const auto start = Clock::now();
  for (int w = 0; w < width; ++w) boost::asio::co_spawn(io, worker(), boost::asio::detached);
  io.run();
  const double wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  return PrintRow(n, latency, wall_s, StatusKiB(getpid(), "VmHWM:"), static_cast<double>(sessions_kib - base_kib) / n,
                  setup);
}

// False when anything failed.
bool RunLoad(int n, Setup& setup) {
  testing::MockUpstream upstream;
  const char* agent = ScriptModel(upstream, n, setup);
  std::vector<std::string> args = {"--config", agent, "--rate", "1000000000", "--burst", "1000000000",
                                   "--shutdown-timeout-ms", "2000"};
  if (setup.threads > 0) args.insert(args.end(), {"--threads", std::to_string(setup.threads)});
  if (setup.store == "postgres") {
    args.insert(args.end(), {"--store", setup.postgres->Url(setup.postgres->NewDatabase())});
  } else if (!setup.store.empty()) {
    args.insert(args.end(), {"--store", setup.store});
  }
  std::vector<std::unique_ptr<testing::ServerProcess>> servers;
  for (int r = 0; r < setup.replicas; ++r) {
    servers.push_back(std::make_unique<testing::ServerProcess>(args));
    if (servers.back()->port() == 0) {
      std::cerr << "reins serve did not start\n" << servers.back()->Log();
      return false;
    }
  }
  auto rss = [&](const char* field) {
    long sum = 0;
    for (const auto& server : servers) sum += StatusKiB(server->pid(), field);
    return sum;
  };
  auto base = [&](int i) { return servers[static_cast<size_t>(i) % servers.size()]->base_url(); };
  const long base_kib = rss("VmRSS:");

  std::vector<Json> sessions;
  RunAll(n, std::min(n, 500), [&](int i) {
    HttpRequest r;
    r.url = base(i) + "/v1/sessions";
    r.body = "{}";
    return r;
  }, &sessions);
  const long sessions_kib = rss("VmRSS:");

  auto start = Clock::now();
  const int width = setup.in_flight > 0 ? std::min(n, setup.in_flight) : n;
  std::vector<double> latency = RunAll(n, width, [&](int i) {
    HttpRequest r;
    r.url = base(i + 1) + "/v1/sessions/" + sessions[i].value("session_id", "") + "/turns";  // replicas: not the one that made it
    r.body = R"({"speaker":"user","say":")" + Question(i, setup) + R"("})";
    r.timeouts.total_ms = r.timeouts.first_byte_ms = 300000;
    return r;
  }, nullptr);
  const double wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  const bool ok = PrintRow(n, latency, wall_s, rss("VmHWM:"), static_cast<double>(sessions_kib - base_kib) / n, setup);
  for (auto& server : servers) server->Signal(SIGTERM);
  for (auto& server : servers) server->Wait();
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  RaiseOpenFileLimit();
  Setup setup;
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--delay-ms" && i + 1 < argc) {
      setup.delay_ms = std::stoi(argv[++i]);
    } else if (a == "--store" && i + 1 < argc) {
      setup.store = argv[++i];
    } else if (a == "--replicas" && i + 1 < argc) {
      setup.replicas = std::max(1, std::stoi(argv[++i]));
    } else if (a == "--threads" && i + 1 < argc) {
      setup.threads = std::max(1, std::stoi(argv[++i]));
    } else if (a == "--tools") {
      setup.tools = true;
    } else if (a == "--embedded") {
      setup.embedded = true;
    } else if (a == "--start-sessions") {
      setup.start_sessions = true;
    } else if (a == "--in-flight" && i + 1 < argc) {
      setup.in_flight = std::max(1, std::stoi(argv[++i]));
    } else if (!a.empty() && std::isdigit(static_cast<unsigned char>(a[0]))) {
      sizes.push_back(std::stoi(a));
    } else {
      std::cerr << "usage: reins_load [--delay-ms MS] [--store URL|postgres] [--replicas K] [--threads T] [--tools] "
                   "[--in-flight W] [--embedded [--start-sessions]] [N ...]\n";
      return 2;
    }
  }
  if (sizes.empty()) sizes = {1000, 10000};
  if (setup.start_sessions && !setup.embedded) {
    std::cerr << "reins_load: --start-sessions is for --embedded (reins serve's clients create their sessions first)\n";
    return 2;
  }
  if (setup.embedded && (setup.replicas > 1 || setup.store == "postgres")) {
    std::cerr << "reins_load: --embedded runs one runtime in this process: no --replicas, and a store URL rather than `postgres`\n";
    return 2;
  }
  if (setup.replicas > 1 && setup.store != "postgres" && !setup.store.starts_with("postgres")) {
    std::cerr << "reins_load: replicas need a shared store: --store postgres or a postgres:// URL\n";
    return 2;
  }
  if (setup.store == "postgres") setup.postgres = testing::TestPostgres::StartOwn();
  if (setup.in_flight > 0) std::printf("turns run %d at a time: the first column is the turns run\n", setup.in_flight);
  const std::string where = setup.embedded ? std::string("one runtime in this process")
                                           : std::to_string(setup.replicas) + " reins serve replica(s) with " +
                                                 (setup.threads > 0 ? std::to_string(setup.threads) : "default") + " threads";
  std::printf("model delay %d ms%s; %s; store %s; loopback\n", setup.delay_ms,
              setup.tools ? ", a tool call in every turn" : "", where.c_str(),
              setup.store.empty() ? "sqlite::memory:" : setup.store.c_str());
  std::printf("| in flight | ok | turns/s | added p50 ms | added p99 ms | peak RSS MiB | KiB per open session |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  bool all_ok = true;
  for (int n : sizes) all_ok = (setup.embedded ? RunEmbedded(n, setup) : RunLoad(n, setup)) && all_ok;
  return all_ok ? 0 : 1;
}
