// The peer job embedded: a C++ program that links reins and runs the job in its own
// process, the way a team embeds the runtime in a service of its own. Its CPU per turn
// is everything the process spends (getrusage: every thread), the model's HTTP
// exchanges and the SQLite commits included. Each turn begins its own session
// (Runtime::StartSession: the session written in the turn's commit), or, with
// `create_first`, follows a CreateSession of its own, as the server's clients do and as
// this program did up to round 17 (docs/PERFORMANCE.md). RunEmbeddedGrowth measures the
// next turn of sessions with earlier turns, for how a turn's cost grows (--only growth).
#include <cstdlib>
#include <iostream>
#include <memory>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "config/agent_config_loader.h"
#include "host/agent_host.h"
#include "host/runtime_parts.h"
#include "peer_job/job_client.h"
#include "peer_job/peer_job.h"

namespace reins::peer_job {
namespace {

// One frame for all the turns: a coroutine per turn here would be one more allocation
// per turn, over 1 KB with the result it returns, which the library's figure would carry.
Task<Status> RunTurns(Runtime& runtime, int n, bool create_first) {
  for (int i = 0; i < n; ++i) {
    TurnInput input;
    input.say = kQuestion;
    std::string reply;
    if (create_first) {
      REINS_CO_ASSIGN_OR_RETURN(std::string session, runtime.CreateSession());
      REINS_CO_ASSIGN_OR_RETURN(TurnResult turn, co_await runtime.RunTurn(session, std::move(input)));
      reply = std::move(turn.reply);
    } else {
      REINS_CO_ASSIGN_OR_RETURN(StartedSession started, co_await runtime.StartSession(std::move(input)));
      reply = std::move(started.turn.reply);
    }
    if (reply != kAnswer) co_return Internal("the reply was \"" + reply + "\"");
  }
  co_return OkStatus();
}

// `samples` sessions, each with `history` earlier turns, then its next turn: only that
// one is measured (`cpu`, the process's CPU while it ran: the share of the checkpoints
// and of the allocator's work that falls in it, as in the turns of RunTurns). The
// session stays in the runtime's memory between its turns, as a conversation does.
Task<Status> RunGrowthSamples(Runtime& runtime, int history, int samples, double* cpu) {
  for (int s = 0; s < samples; ++s) {
    std::string session;  // begun by its first turn
    for (int i = 0; i <= history; ++i) {
      TurnInput input;
      input.say = kQuestion;
      const double before = OwnCpuSeconds();
      std::string reply;
      if (session.empty()) {
        REINS_CO_ASSIGN_OR_RETURN(StartedSession started, co_await runtime.StartSession(std::move(input)));
        session = std::move(started.session_id);
        reply = std::move(started.turn.reply);
      } else {
        REINS_CO_ASSIGN_OR_RETURN(TurnResult turn, co_await runtime.RunTurn(session, std::move(input)));
        reply = std::move(turn.reply);
      }
      if (i == history) *cpu += OwnCpuSeconds() - before;
      if (reply != kAnswer) co_return Internal("the reply was \"" + reply + "\"");
    }
  }
  co_return OkStatus();
}

// A service that embeds reins runs its io_context for long and holds a TimerFloor, as
// `reins serve` does; let go here once `turns` is done, so that run() returns.
Status Run(Task<Status> turns) {
  boost::asio::io_context io;
  TimerFloor floor(io.get_executor());
  Status status = Internal("the turns did not finish");
  auto run = [&]() -> Task<void> {
    status = co_await std::move(turns);
    floor.Stop();
  };
  boost::asio::co_spawn(io, run(), boost::asio::detached);
  io.run();
  return status;
}

// The runtime of the job's agent (`agent`, a file) over a SQLite file in `dir`, warmed
// up with kWarmTurns turns; `host` keeps it.
Result<Runtime*> WarmRuntime(const std::string& mock_url, const std::string& dir, const std::string& agent,
                             bool create_first, std::unique_ptr<AgentHost>& host) {
  setenv("REINS_JOB_MOCK", (mock_url + "/v1").c_str(), 1);
  REINS_ASSIGN_OR_RETURN(AgentConfig config, LoadAgentConfigFile(agent));
  auto clock = std::make_shared<SystemClock>();
  REINS_ASSIGN_OR_RETURN(RuntimeParts parts, MakeRuntimeParts(config, "sqlite:" + dir + "/embedded.db", clock));
  REINS_ASSIGN_OR_RETURN(host, AgentHost::Start(config, clock));
  REINS_ASSIGN_OR_RETURN(Runtime * runtime, host->StartRuntime(std::move(parts)));
  REINS_RETURN_IF_ERROR(Run(RunTurns(*runtime, kWarmTurns, create_first)));
  return runtime;
}

int PrintError(const Status& status) {
  std::cout << Json{{"runtime", "reins embedded"}, {"error", status.message()}}.dump() << std::endl;
  return 1;
}

}  // namespace

int RunEmbedded(const std::string& mock_url, const std::string& dir, int turns, bool create_first) {
  std::unique_ptr<AgentHost> host;
  Result<Runtime*> runtime = WarmRuntime(mock_url, dir, REINS_JOB_AGENT, create_first, host);
  if (!runtime.ok()) return PrintError(runtime.status());
  const CpuUse before = OwnCpu();
  Status ran = Run(RunTurns(**runtime, turns, create_first));
  const CpuUse cpu = OwnCpu() - before;
  if (!ran.ok()) return PrintError(ran);
  std::cout << Json{{"runtime", "reins embedded"}, {"mode", "cpu"}, {"turns", turns},
                    {"sessions", create_first ? "created first" : "begun by their turn"},
                    {"cpu_us_per_turn", cpu.total() * 1e6 / turns}, {"kernel_us_per_turn", cpu.system * 1e6 / turns}}.dump()
            << std::endl;
  return 0;
}

int RunEmbeddedGrowth(const std::string& mock_url, const std::string& dir, const std::string& agent, int history,
                      int samples) {
  std::unique_ptr<AgentHost> host;
  Result<Runtime*> runtime = WarmRuntime(mock_url, dir, agent, false, host);
  if (!runtime.ok()) return PrintError(runtime.status());
  double cpu = 0;
  if (Status ran = Run(RunGrowthSamples(**runtime, history, samples, &cpu)); !ran.ok()) return PrintError(ran);
  std::cout << Json{{"runtime", "reins embedded"}, {"mode", "growth"}, {"history", history},
                    {"tools", (*runtime)->config()->tools.size()}, {"samples", samples},
                    {"cpu_us_per_turn", cpu * 1e6 / samples}}.dump()
            << std::endl;
  return 0;
}

}  // namespace reins::peer_job
