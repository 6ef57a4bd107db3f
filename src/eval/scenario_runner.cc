#include "eval/scenario_runner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>
#include <random>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "eval/cassette.h"
#include "eval/checks.h"
#include "eval/eval_model.h"
#include "eval/harms.h"
#include "eval/invariants.h"
#include "eval/naive_loop.h"
#include "host/agent_host.h"
#include "model/provider_factory.h"
#include "model/scripted_model.h"
#include "model/sim_model.h"
#include "reins/runtime.h"
#include "turn/session_state.h"
#include "tools/fixture_backend.h"

namespace reins {
namespace {

// 64 random bits as hex, different for every run of the process and across processes.
std::string RunNonce() {
  static std::random_device device;
  static std::mutex mu;
  std::lock_guard lock(mu);
  const uint64_t bits = (uint64_t{device()} << 32) ^ device();
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(bits));
  return text;
}

// The model of one run: the scripted model (a missing reply is the scenario's mistake),
// the simulated one (its scripted replies are only the correct behaviour), or a real
// provider (the replies are ignored).
struct RunModel {
  std::shared_ptr<ModelProvider> provider;
  ScriptedModel* script = nullptr;
  SimModel* sim = nullptr;
  MeteredModel* real = nullptr;
  std::shared_ptr<CassetteTape> tape;
};

Result<RunModel> MakeRealModel(const RunOptions& options, VirtualClock& clock) {
  RunModel m;
  if (options.cassette) m.tape = options.cassette->ForRun(options.run, options.governor);
  // Its retries wait in real time: a provider's Retry-After is about its clock.
  REINS_ASSIGN_OR_RETURN(std::shared_ptr<ModelProvider> provider,
                         MakeModelProvider(*options.real_model, std::make_shared<SystemClock>(), m.tape));
  auto metered = std::make_shared<MeteredModel>(std::move(provider), clock, options.real_model->pricing, options.budget);
  m.real = metered.get();
  m.provider = std::move(metered);
  return m;
}

Result<RunModel> MakeRunModel(const Scenario& s, const RunOptions& options, VirtualClock& clock) {
  if (options.real_model) return MakeRealModel(options, clock);
  if (s.model.is_null()) {
    return FailedPrecondition("scenario '" + s.id + "' has no model of its own; run it with --model agent or PROVIDER:MODEL");
  }
  RunModel m;
  bool sim = !options.sim.is_null() || s.model.value("provider", "scripted") == "sim";
  if (!sim) {
    auto scripted = std::make_shared<ScriptedModel>(s.model.value("replies", Json::array()));
    m.script = scripted.get();
    m.provider = std::move(scripted);
    return m;
  }
  Json spec = s.model;
  if (options.sim.is_object()) {
    for (const auto& [k, v] : options.sim.items()) spec[k] = v;
  }
  REINS_ASSIGN_OR_RETURN(SimOptions sim_options, SimOptionsFromJson(spec));
  sim_options.injections = PlantedInstructions(s.fixtures);
  auto model = std::make_shared<SimModel>(std::move(sim_options));
  m.script = &model->script();
  m.sim = model.get();
  m.provider = std::move(model);
  return m;
}

// Where a turn goes: the governed runtime or the naive loop.
struct Driver {
  Runtime* runtime = nullptr;
  NaiveLoop* naive = nullptr;
  std::string session_id;
  bool stream = false;  // the governed runtime streams each reply to `turn`

  std::function<void()> before_turn;  // settles the MCP catalog

  // What a refused turn leaves pending (as the session had it: a refusal changes
  // nothing), so that its checks read the session as every turn result reports it.
  void Pending(TurnResult& result) const {
    if (runtime == nullptr) return;
    Result<SessionRecord> session = runtime->store().LoadSession(session_id);
    if (!session.ok()) return;
    SessionState state = SessionState::FromJson(session->state);
    if (state.pending_clarification) result.clarification = *state.pending_clarification;
    if (state.pending_approval) result.approval = *state.pending_approval;
  }

  Task<Result<TurnResult>> Run(TurnInput input, TurnRun& turn) {
    if (naive != nullptr) co_return co_await naive->RunTurn(input);
    if (before_turn) before_turn();
    if (stream) Listen(input, turn);
    co_return co_await runtime->RunTurn(session_id, input);
  }

  // Keeps what a streaming client receives, and at each delta whether the writes the
  // turn queued before it are in the store (I12: before the first streamed byte).
  void Listen(TurnInput& input, TurnRun& turn) {
    turn.streamed = true;
    input.on_event = [this, &turn, queued = std::vector<std::string>()](const TraceEvent& e) mutable {
      if (e.type == EventType::kToolDeferred) queued.push_back(e.data.value("idempotency_key", ""));
      if (e.type != EventType::kReplyDelta) return;
      turn.deltas += e.data.value("text", "");
      if (queued.empty()) return;  // nothing queued since the last delta's look
      Result<std::vector<OutboxEntry>> stored = runtime->store().LoadOutbox(session_id);
      for (const std::string& key : queued) {
        const bool found = stored.ok() && std::any_of(stored->begin(), stored->end(),
                                                      [&](const OutboxEntry& o) { return o.key == key; });
        if (!found) turn.writes_not_stored.push_back(key);
      }
      queued.clear();
    };
  }
};

// The scenario person's answer to a pending approval (Scenario::person): approve what
// it approves, deny the rest.
bool PersonApproves(const ScenarioPerson& person, const PendingApproval& pending) {
  return std::any_of(person.approves.begin(), person.approves.end(), [&](const Json& call) {
    return call.value("name", "") == pending.tool && JsonSubsetMatch(call.value("args", Json::object()), pending.args);
  });
}

// How many approvals the person answers after one turn of the scenario: a model that
// keeps proposing calls to pause is answered this often, then left pending.
constexpr int kPersonAnswers = 8;

// The scenario's person answers the approval the last turn left pending (at most
// kPersonAnswers in a row): true with that answer in `answer`.
bool PersonAnswers(const Scenario& s, const ScenarioRun& run, int answers, ScenarioTurn& answer) {
  if (!s.person.present || run.turns.empty() || answers >= kPersonAnswers) return false;
  const TurnRun& last = run.turns.back();
  if (last.refused || !last.result.approval) return false;
  answer.input.speaker = last.input.speaker;
  answer.input.approve = PersonApproves(s.person, *last.result.approval);
  return true;
}

Task<void> RunTurns(const Scenario& s, Driver& driver, RunModel& model, VirtualClock& clock, ScenarioRun& run) {
  int completed_turns = 0;
  size_t next = 0;  // the scenario's next turn
  int answers = 0;  // the person's answers since it
  for (;;) {
    ScenarioTurn answer;
    const bool person = PersonAnswers(s, run, answers, answer);
    if (!person && next == s.turns.size()) co_return;
    answers = person ? answers + 1 : 0;
    const ScenarioTurn& st = person ? answer : s.turns[next];
    TurnRun tr;
    tr.number = static_cast<int>(run.turns.size()) + 1;
    tr.scenario_turn = person ? -1 : static_cast<int>(next++);
    tr.input = st.input;
    // Waiting, not jumping: background work due in the meantime (deferred calls) runs.
    if (st.advance_ms > 0) co_await clock.Sleep(st.advance_ms);
    if (st.model_replies.is_array() && model.script) model.script->AddTurnReplies(completed_turns + 1, st.model_replies);
    if (model.tape) model.tape->SetTurn(tr.number);
    const size_t calls_before = model.script ? model.script->calls().size() : 0;
    const auto started = std::chrono::steady_clock::now();
    Result<TurnResult> result = co_await driver.Run(st.input, tr);
    run.turn_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
    if (result.ok()) {
      tr.result = std::move(result).value();
      ++completed_turns;
    } else {
      tr.refused = true;
      tr.refusal = result.status().message();
      driver.Pending(tr.result);
    }
    for (size_t c = calls_before; model.script && c < model.script->calls().size() && model.sim == nullptr; ++c) {
      if (model.script->calls()[c].reply < 0) run.error = "turn " + std::to_string(tr.number) + ": " + tr.result.error;
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

void Evaluate(const Scenario& s, const AgentConfig& agent, ScenarioRun& run, const std::vector<OutboxEntry>& outbox) {
  for (TurnRun& t : run.turns) {
    if (t.scenario_turn < 0) continue;  // the person's answer: the scenario checks none
    for (const Check& check : s.turns[static_cast<size_t>(t.scenario_turn)].expect) t.checks.push_back(EvaluateTurnCheck(check, t));
  }
  if (run.error.empty()) {
    for (const Check& check : s.final_checks) run.final_checks.push_back(EvaluateFinalCheck(check, run.turns));
  }
  run.violations = CheckInvariants(agent, run.turns, run.history, outbox);
  run.harms = FindHarms(agent, run.turns, PlantedInstructions(s.fixtures));
}

// What one run works with: the agent and its tools, assembled by an AgentHost (the
// scenario's fixtures win over what the config names, MCP tools included), the
// virtual clock, and the io_context the turns run on.
struct RunSetup {
  boost::asio::io_context io;
  AgentConfig agent;  // what the invariants judge by
  std::shared_ptr<VirtualClock> clock;
  std::unique_ptr<AgentHost> host;  // declared last: its runtime and servers stop first

  Status Prepare(const Scenario& s) {
    clock = std::make_shared<VirtualClock>(s.clock_start_ms);
    HostOptions options;
    for (const auto& [tool, entries] : s.fixtures) {
      options.overrides[tool] = std::make_shared<FixtureBackend>(tool, entries, *clock);
    }
    REINS_ASSIGN_OR_RETURN(host, AgentHost::Start(s.agent, clock, std::move(options)));
    agent = host->agent();
    return OkStatus();
  }

  // Before each turn: the tool-list changes the servers announced so far are applied
  // (turn 2 sees the tool turn 1's call added). The invariant checks judge every turn
  // by the tools of the newest catalog and those earlier turns could call.
  void SettleCatalog(Runtime& runtime) {
    host->AwaitCatalog();
    std::shared_ptr<const AgentConfig> now = runtime.config();
    std::vector<ToolDef> judged = now->tools;
    for (const ToolDef& old : agent.tools) {
      if (now->FindTool(old.name) == nullptr) judged.push_back(old);
    }
    agent.tools = std::move(judged);
  }
};

// What the model reports of the run: the sim's faults (and how the harm detectors read
// the replies it wrote them into), a real model's usage, and a
// replayed request the cassette did not hold (that fails the run, whatever it checked).
void CollectModel(const RunModel& model, const AgentConfig& agent, ScenarioRun& run) {
  if (model.sim != nullptr) {
    run.fault_tally = model.sim->tally();
    run.detectors = ScoreDetectors(agent, model.sim->replies());
  }
  if (model.real != nullptr) run.usage = model.real->usage();
  if (model.tape && !model.tape->miss().empty() && run.error.empty()) run.error = model.tape->miss();
}

ScenarioRun RunNaive(const Scenario& s, RunModel& model, RunSetup& setup, ScenarioRun run) {
  NaiveLoop loop(setup.agent, *model.provider, setup.host->Backends(), *setup.clock);
  Driver driver{nullptr, &loop, "naive"};
  run.session_id = "naive";
  boost::asio::co_spawn(setup.io, RunTurns(s, driver, model, *setup.clock, run), boost::asio::detached);
  setup.clock->RunVirtual(setup.io);
  run.history = loop.history();
  Evaluate(s, setup.agent, run, {});
  return run;
}

}  // namespace

ScenarioRun RunScenario(const Scenario& s, const RunOptions& options) {
  ScenarioRun run;
  run.id = s.id;
  run.title = s.title;
  run.file = s.file;
  RunSetup setup;
  if (Status prepared = setup.Prepare(s); !prepared.ok()) {
    run.error = prepared.message();
    return run;
  }
  Result<RunModel> model = MakeRunModel(s, options, *setup.clock);
  if (!model.ok()) {
    run.error = model.status().message();
    return run;
  }
  if (options.real_model) run.model = options.real_model->provider + ":" + options.real_model->model;
  if (!options.governor) {
    run = RunNaive(s, *model, setup, std::move(run));
    CollectModel(*model, setup.agent, run);
    return run;
  }
  Result<std::unique_ptr<Store>> store = OpenStore(options.store_url);
  if (!store.ok()) {
    run.error = store.status().message();
    return run;
  }
  RuntimeParts parts;
  parts.model = model->provider;
  parts.store = std::shared_ptr<Store>(std::move(store).value());
  parts.id_seed = options.id_seed;
  // Ids repeat from run to run; what a real service sees must not (docs/scenarios.md).
  parts.idempotency_salt = "." + RunNonce();
  std::shared_ptr<Store> stored = parts.store;
  Result<Runtime*> runtime = setup.host->StartRuntime(std::move(parts));
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

  Driver driver{*runtime, nullptr, run.session_id, s.stream};
  driver.before_turn = [&] { setup.SettleCatalog(**runtime); };
  boost::asio::co_spawn(setup.io, RunTurns(s, driver, *model, *setup.clock, run), boost::asio::detached);
  setup.clock->RunVirtual(setup.io);  // returns when every turn and every deferred call is done

  std::vector<OutboxEntry> outbox;
  if (Status refreshed = RefreshFromStore(*stored, run, &outbox); !refreshed.ok()) {
    run.error = "could not read the session back from the store: " + refreshed.message();
  }
  Evaluate(s, setup.agent, run, outbox);
  CollectModel(*model, setup.agent, run);
  return run;
}

}  // namespace reins
