// Runtime: the embeddable entry point of reins. Built once from an AgentConfig and its
// parts (model provider, store, clock, tool backends); then each call to RunTurn runs
// one turn of one session through the governed pipeline (docs/architecture.md) and
// commits it to the store atomically.
//
// A turn's deferred calls run after it is committed: RunTurn waits for them in
// `await` mode (up to deferred.timeout_ms), or leaves them running in `background`.
//
// Threading: run each RunTurn on a strand (or a one-thread loop). A session's turns run
// one at a time in arrival order, whichever strands they come from (one that waited past
// floor.max_queue_age_ms is blocked: stale); sessions on different strands run in parallel
// where the model and tools may be called from several threads. Drain or stop those
// executors before destroying the Runtime: background deferred calls use them.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <vector>
#include <memory>
#include <string>

#include "reins/agent_config.h"
#include "reins/async.h"
#include "reins/clock.h"
#include "reins/model_provider.h"
#include "reins/session_view.h"
#include "reins/status.h"
#include "reins/store.h"
#include "reins/tool_backend.h"
#include "reins/turn.h"

namespace reins {

struct RuntimeParts {
  std::shared_ptr<ModelProvider> model;  // required
  // Answers the audit's verdict calls (the config's audit_model); null: `model` does.
  std::shared_ptr<ModelProvider> audit_model;
  std::shared_ptr<Store> store;          // required
  std::shared_ptr<Clock> clock;          // default: SystemClock
  // Backends that replace the ones the config names (scenario fixtures, tests).
  std::map<std::string, std::shared_ptr<ToolBackend>> tool_backends;
  // Makes the backend of each MCP tool of a catalog (the McpHub that AgentHost starts,
  // src/host); unset, an MCP tool's calls fail saying that no server was started.
  // Called from any thread; the result may be called from the runtime's executor.
  std::function<std::shared_ptr<ToolBackend>(const ToolDef&)> mcp_backends;
  // Session and turn ids: a time-ordered prefix, then 96 random bits. A non-zero seed
  // makes them reproducible (run, eval, fuzz); 0 draws them from OpenSSL's RAND_bytes,
  // so that nobody can guess another session's id (serve, chat).
  uint64_t id_seed = 0;
  // Appended to every idempotency key a tool backend is sent (never to the key stored):
  // seeded runs repeat their ids, and a de-duplicating service must not take a second
  // run's writes for the first's. Scenario runs set a fresh one per run.
  std::string idempotency_salt;
  // Sessions kept in memory between turns, least recently used evicted first; the
  // store is the truth, an evicted session is read again on its next turn.
  size_t session_cache = 10000;
  // Test hook: called right after a turn (and its outbox rows) is committed and before
  // any deferred call runs. Crash tests kill the process here.
  std::function<void(const std::string& turn_id)> after_commit;
  // Every event of every session once it is durable: a turn's events when it is
  // committed, then its deferred calls' events (and notices) as they finish. For
  // session event streams (the server's GET .../events). Called on the executor.
  std::function<void(const std::string& session_id, const TraceEvent& event)> on_event;
  // A committed turn's events, all at once, just before on_event is given them one by
  // one (OpenTelemetry builds the turn's spans from them in place). On the executor.
  std::function<void(const std::string& session_id, const std::vector<TraceEvent>& events)> on_turn;
};

// A turn's result on the heap (Runtime::RunTurnOnHeap): a pointer in the frames that
// await it, where a Result<TurnResult> would take about 770 bytes in each.
struct TurnResultBox {
  TurnResultBox() = default;  // asio's co_spawn wants a default
  TurnResultBox(Status refused);  // NOLINT: implicit, as Result's are
  TurnResultBox(TurnResult ran);  // NOLINT
  std::unique_ptr<Result<TurnResult>> result;
};

// A session begun by its first turn (Runtime::StartSession).
struct StartedSession {
  std::string session_id;
  TurnResult turn;
};

class Runtime {
 public:
  static Result<std::unique_ptr<Runtime>> Create(AgentConfig config, RuntimeParts parts);
  ~Runtime();

  Result<std::string> CreateSession(const Json& metadata = Json::object(), const std::string& tenant = "");
  // The agent's greeting, sent verbatim when a session starts ("" when none).
  std::string Greeting() const;
  // A non-OK Status means the input was refused and nothing was recorded: unknown
  // session (NotFound), `select` with no pending clarification (FailedPrecondition),
  // an idempotency_key that an earlier turn of the session used for this same request
  // (AlreadyExists: read that turn with Store::FindTurnByKey) or for a different one
  // (InvalidArgument). Everything else, including a
  // failed model call, is a TurnResult with a status.
  Task<Result<TurnResult>> RunTurn(const std::string& session_id, TurnInput input);
  // CreateSession and RunTurn in one: a session that begins with its first turn, as a
  // conversation does that starts when its first message arrives. On this process's
  // own store (SQLite) the session is written in the turn's commit, one transaction
  // instead of two, and a refused turn (the non-OK Status) leaves no session behind.
  // A shared store's claims, and a streamed reply's writes staged before its commit,
  // need the session stored first: there it is created first, and a refusal after the
  // input's own checks leaves it, empty. The server hands out a session's id before
  // its first message (POST /v1/sessions) unless the request brings that message too
  // (its `turn`): then it starts the session so (StartSessionOnHeap).
  Task<Result<StartedSession>> StartSession(TurnInput first, const Json& metadata = Json::object(),
                                            const std::string& tenant = "");
  // StartSession for a caller that keeps many turns waiting on their models (the server),
  // as RunTurnOnHeap is RunTurn's: the new session's id is in `*id` before the turn runs
  // (the caller answers with it), and the result comes back on the heap.
  Task<TurnResultBox> StartSessionOnHeap(std::unique_ptr<TurnInput> first, const Json& metadata,
                                         const std::string& tenant, std::string* id);
  // RunTurn for a caller that keeps many turns waiting on their models (the server):
  // the turn owns its arguments and its result comes back on the heap, so no frame
  // between the caller and the turn holds a TurnResult while the turn waits. The input
  // on the heap too (the second form) keeps its ~230 bytes out of the turn's frame.
  Task<TurnResultBox> RunTurnOnHeap(std::string session_id, TurnInput input);
  Task<TurnResultBox> RunTurnOnHeap(std::string session_id, std::unique_ptr<TurnInput> input);

  // Runs the outbox entries a previous process left unfinished (crash recovery, I12),
  // each under its idempotency key; failures become notices. Returns how many ran.
  // quiet_ms > 0 skips entries touched more recently: on a shared store another
  // replica may be about to claim them (reins serve sweeps its peers' leftovers so).
  // On a shared store it first releases session claims a store outage left held.
  Task<Result<int>> ResumeOutbox(int64_t quiet_ms = 0);

  // Replaces the agent's tool catalog (an MCP server's tool list changed): turns that
  // start afterwards see `tools`, with backends from the same sources as the first
  // catalog's; turns and deferred calls already running finish on the catalog they
  // started with, which is freed once none uses it. Safe from any thread.
  Status ReplaceTools(std::vector<ToolDef> tools);

  // The current catalog's config; the caller's copy stays valid across ReplaceTools.
  std::shared_ptr<const AgentConfig> config() const;
  // The read side of the sessions (what a server shows), through the store and clock.
  const SessionView& sessions() const;
  // The runtime's own clock: whoever stamps times next to its records uses this one.
  const Clock& clock() const;
  // The store itself, for embedders and tests that inspect what was written.
  Store& store();
  // Sessions held in memory now (at most RuntimeParts.session_cache).
  size_t cached_sessions() const;

 private:
  struct Impl;
  explicit Runtime(std::unique_ptr<Impl> impl);
  Task<Result<StartedSession>> StartSession(std::unique_ptr<TurnInput> first, std::unique_ptr<SessionRecord> record);
  Task<TurnResultBox> Begin(std::unique_ptr<TurnInput> first, std::unique_ptr<SessionRecord> record);
  Task<TurnResultBox> CreateThenRun(std::unique_ptr<TurnInput> first, std::unique_ptr<SessionRecord> record);
  std::unique_ptr<Impl> impl_;
};

}  // namespace reins
