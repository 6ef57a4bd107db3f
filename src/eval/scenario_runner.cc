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
  int completed_turns = 0;
  for (size_t i = 0; i < s.turns.size(); ++i) {
    const ScenarioTurn& st = s.turns[i];
    TurnRun tr;
    tr.number = static_cast<int>(i) + 1;
    tr.input = st.input;
    // Waiting, not jumping: background work due in the meantime (deferred calls) runs.
    if (st.advance_ms > 0) co_await clock.Sleep(st.advance_ms);
    if (st.model_replies.is_array()) model.AddTurnReplies(completed_turns + 1, st.model_replies);
    size_t calls_before = model.calls().size();
    Result<TurnResult> result = co_await runtime.RunTurn(run.session_id, st.input);
    if (result.ok()) {
      tr.result = std::move(result).value();
      ++completed_turns;
    } else {
      tr.refused = true;
      tr.refusal = result.status().message();
    }
    for (size_t c = calls_before; c < model.calls().size(); ++c) {
      if (model.calls()[c].reply < 0) run.error = "turn " + std::to_string(tr.number) + ": " + tr.result.error;
    }
    run.turns.push_back(std::move(tr));
    if (!run.error.empty()) co_return;
  }
}

// Deferred calls finish after their turn returned (background mode, or past the await
// budget): read every turn back from the store so checks and invariants see their
// final replies, events and deferred outcomes.
Status RefreshFromStore(Store& store, ScenarioRun& run, std::vector<OutboxEntry>* outbox) {
  REINS_ASSIGN_OR_RETURN(std::vector<StoredTurn> stored, store.LoadTurns(run.session_id));
  REINS_ASSIGN_OR_RETURN(std::vector<StoredInvocation> calls, store.LoadInvocations(run.session_id));
  REINS_ASSIGN_OR_RETURN(*outbox, store.LoadOutbox(run.session_id));
  REINS_ASSIGN_OR_RETURN(run.history, store.LoadMessages(run.session_id));
  for (TurnRun& t : run.turns) {
    if (t.refused) continue;
    for (const StoredTurn& st : stored) {
      if (st.turn_id != t.result.turn_id) continue;
      t.result.reply = st.reply;
      t.result.events = st.events;
    }
    for (ToolOutcome& o : t.result.tools) {
      if (o.status != ToolOutcome::Status::kDeferred) continue;
      for (const StoredInvocation& c : calls) {
        if (c.turn_id != t.result.turn_id || c.response_index != o.response_index || c.position != o.position) continue;
        if (c.success.has_value()) o.result = NormaliseToolResult(c.result);
      }
    }
  }
  return OkStatus();
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

  run.greeting = (*runtime)->Greeting();

  boost::asio::io_context io;
  boost::asio::co_spawn(io, RunTurns(s, **runtime, *model, *clock, run), boost::asio::detached);
  clock->RunVirtual(io);  // returns when every turn and every deferred call is done

  std::vector<OutboxEntry> outbox;
  if (Status refreshed = RefreshFromStore(*parts.store, run, &outbox); !refreshed.ok()) {
    run.error = "could not read the session back from the store: " + refreshed.message();
  }
  for (size_t i = 0; i < run.turns.size(); ++i) {
    for (const Check& check : s.turns[i].expect) run.turns[i].checks.push_back(EvaluateTurnCheck(check, run.turns[i]));
  }
  if (run.error.empty()) {
    for (const Check& check : s.final_checks) run.final_checks.push_back(EvaluateFinalCheck(check, run.turns));
  }
  run.violations = CheckInvariants(s.agent, run.turns, run.history, outbox);
  return run;
}

}  // namespace reins
