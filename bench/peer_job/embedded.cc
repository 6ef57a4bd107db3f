// The peer job embedded: a C++ program that links reins and runs the job in its own
// process, the way a team embeds the runtime in a service of its own. Its CPU per turn
// is everything the process spends (getrusage: every thread), the model's HTTP
// exchanges and the SQLite commits included. Each turn begins its own session
// (Runtime::StartSession: the session written in the turn's commit), or, with
// `create_first`, follows a CreateSession of its own, as the server's clients do and as
// this program did up to round 17 (docs/PERFORMANCE.md).
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

// A service that embeds reins runs its io_context for long and holds a TimerFloor, as
// `reins serve` does; let go here once the turns are done, so that run() returns.
Status Run(Runtime& runtime, int n, bool create_first) {
  boost::asio::io_context io;
  TimerFloor floor(io.get_executor());
  Status status = Internal("the turns did not finish");
  auto run = [&]() -> Task<void> {
    status = co_await RunTurns(runtime, n, create_first);
    floor.Stop();
  };
  boost::asio::co_spawn(io, run(), boost::asio::detached);
  io.run();
  return status;
}

}  // namespace

int RunEmbedded(const std::string& mock_url, const std::string& dir, int turns, bool create_first) {
  setenv("REINS_JOB_MOCK", (mock_url + "/v1").c_str(), 1);
  Result<AgentConfig> config = LoadAgentConfigFile(REINS_JOB_AGENT);
  auto clock = std::make_shared<SystemClock>();
  Result<RuntimeParts> parts = config.ok() ? MakeRuntimeParts(*config, "sqlite:" + dir + "/embedded.db", clock)
                                           : Result<RuntimeParts>(config.status());
  Result<std::unique_ptr<AgentHost>> host = parts.ok() ? AgentHost::Start(*config, clock)
                                                       : Result<std::unique_ptr<AgentHost>>(parts.status());
  Result<Runtime*> runtime = host.ok() ? (*host)->StartRuntime(std::move(parts).value()) : Result<Runtime*>(host.status());
  Status ran = runtime.ok() ? Run(**runtime, kWarmTurns, create_first) : runtime.status();
  const double before = OwnCpuSeconds();
  if (ran.ok()) ran = Run(**runtime, turns, create_first);
  const double cpu = OwnCpuSeconds() - before;
  if (!ran.ok()) {
    std::cout << Json{{"runtime", "reins embedded"}, {"error", ran.message()}}.dump() << std::endl;
    return 1;
  }
  std::cout << Json{{"runtime", "reins embedded"}, {"mode", "cpu"}, {"turns", turns},
                    {"sessions", create_first ? "created first" : "begun by their turn"},
                    {"cpu_us_per_turn", cpu * 1e6 / turns}}.dump()
            << std::endl;
  return 0;
}

}  // namespace reins::peer_job
