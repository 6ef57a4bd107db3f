#include "eval/scenario_runner.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "eval/checks.h"
#include "eval/invariants.h"
#include "model/scripted_model.h"
#include "reins/runtime.h"
#include "tools/fixture_backend.h"

namespace reins {
namespace {

Task<void> RunTurns(const Scenario& s, Runtime& runtime, ScriptedModel& model, VirtualClock& clock, ScenarioRun& run) {
  for (size_t i = 0; i < s.turns.size(); ++i) {
    const ScenarioTurn& st = s.turns[i];
    TurnRun tr;
    tr.number = static_cast<int>(i) + 1;
    tr.input = st.input;
    if (st.advance_ms > 0) clock.Advance(st.advance_ms);
    int completed_turns = 0;
    for (const TurnRun& t : run.turns) completed_turns += t.refused ? 0 : 1;
    if (st.model_replies.is_array()) model.AddTurnReplies(completed_turns + 1, st.model_replies);
    size_t calls_before = model.calls().size();
    Result<TurnResult> result = co_await runtime.RunTurn(run.session_id, st.input);
    if (result.ok()) {
      tr.result = std::move(result).value();
    } else {
      tr.refused = true;
      tr.refusal = result.status().message();
    }
    for (size_t c = calls_before; c < model.calls().size(); ++c) {
      if (model.calls()[c].reply < 0) run.error = "turn " + std::to_string(tr.number) + ": " + tr.result.error;
    }
    for (const Check& check : st.expect) tr.checks.push_back(EvaluateTurnCheck(check, tr));
    run.turns.push_back(std::move(tr));
    if (!run.error.empty()) co_return;
  }
}

}  // namespace

ScenarioRun RunScenario(const Scenario& s, const RunOptions& options) {
  ScenarioRun run;
  run.id = s.id;
  run.title = s.title;
  run.file = s.file;
  if (s.model.value("provider", "scripted") != "scripted") {
    run.error = "model provider '" + s.model.value("provider", "") + "' is not available in this build (use scripted)";
    return run;
  }
  auto clock = std::make_shared<VirtualClock>(s.clock_start_ms);
  auto model = std::make_shared<ScriptedModel>(s.model.value("replies", Json::array()));
  Result<std::unique_ptr<Store>> store = OpenStore(options.store_url);
  if (!store.ok()) {
    run.error = store.status().message();
    return run;
  }
  RuntimeParts parts;
  parts.model = model;
  parts.store = std::shared_ptr<Store>(std::move(store).value());
  parts.clock = clock;
  parts.id_seed = options.id_seed;
  for (const auto& [tool, entries] : s.fixtures) {
    parts.tool_backends[tool] = std::make_shared<FixtureBackend>(tool, entries, *clock);
  }
  Result<std::unique_ptr<Runtime>> runtime = Runtime::Create(s.agent, parts);
  if (!runtime.ok()) {
    run.error = runtime.status().message();
    return run;
  }
  Result<std::string> session = (*runtime)->CreateSession();
  if (!session.ok()) {
    run.error = session.status().message();
    return run;
  }
  run.session_id = *session;

  boost::asio::io_context io;
  boost::asio::co_spawn(io, RunTurns(s, **runtime, *model, *clock, run), boost::asio::detached);
  clock->RunVirtual(io);

  if (auto history = parts.store->LoadMessages(run.session_id); history.ok()) {
    run.history = std::move(history).value();
  } else {
    run.error = "could not read the stored history back: " + history.status().message();
  }
  if (run.error.empty()) {
    for (const Check& check : s.final_checks) run.final_checks.push_back(EvaluateFinalCheck(check, run.turns));
  }
  run.violations = CheckInvariants(s.agent, run.turns, run.history);
  return run;
}

}  // namespace reins
