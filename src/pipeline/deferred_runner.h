// DeferredRunner: runs deferred (write-behind) calls from the outbox after their
// turn's reply is final (I4), each under its idempotency key (I12), and makes sure a
// failure reaches the person (I5): as a note on the reply when the turn still waits
// (`await`), otherwise as a notice put in front of the next reply.
//
// A call that outlives the await budget (deferred.timeout_ms) is not abandoned: it
// goes on, bounded by its tool's timeout_ms, and records its own outcome.
//
// Lifetime: detached calls reference the runner, its store and tools, and hold the
// `keep_alive` their caller gives them (the runtime's tool catalog, which owns the
// runner); the io_context running them must be drained or stopped before the Runtime
// that owns the store goes.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>

#include "pipeline/store_calls.h"
#include "policy/act/action_talk.h"
#include "reins/agent_config.h"
#include "reins/async.h"
#include "reins/clock.h"
#include "reins/store.h"
#include "tools/tool_router.h"

namespace reins {

struct DeferredResult {
  OutboxEntry entry;
  ResultEnvelope result;
  int64_t latency_ms = 0;
  TraceEvent event;  // deferred.executed
};

// How a deferred call runs (its deferred.started event says): while its turn waits,
// in the background, or resumed from the outbox after a restart.
enum class DeferredRun { kAwait, kBackground, kResumed };
inline constexpr EnumNames<DeferredRun, 3> kDeferredRuns{
    {{{DeferredRun::kAwait, "await"}, {DeferredRun::kBackground, "background"}, {DeferredRun::kResumed, "resumed"}}}};

// The turn whose writes run: its number (for their events) and the trace it belongs to
// (its caller's traceparent, "" when none), so that a write's HTTP call joins that trace.
struct DeferredTurn {
  int number = 0;
  std::string traceparent;
};

class DeferredRunner {
 public:
  DeferredRunner(const AgentConfig& config, const ToolRouter& tools, StoreCalls& calls, Clock& clock)
      : config_(config), tools_(tools), calls_(calls), clock_(clock), reader_(config.tools) {}

  // Runs `entries` concurrently and waits at most deferred.timeout_ms. Returns the
  // results that arrived in time, NOT yet recorded (the caller adds the failure notes
  // to the reply, then records them). Later arrivals record themselves.
  Task<std::vector<DeferredResult>> RunAwait(std::vector<OutboxEntry> entries, DeferredTurn turn,
                                             std::shared_ptr<const void> keep_alive, DeferredRun mode = DeferredRun::kAwait);
  // Runs each entry detached and records its outcome; a failure becomes a notice.
  void Spawn(const boost::asio::any_io_executor& ex, std::vector<OutboxEntry> entries, DeferredTurn turn,
             DeferredRun mode, std::shared_ptr<const void> keep_alive);
  // Records a result that nobody waits for: failure -> notice (and its event).
  Task<void> RecordUnattended(const DeferredResult& r);
  // Records `outcome` until the store takes it (StoreCalls::RunUntilReachable): the call
  // ran, so an outcome the store could not take must not be left for a sweep to run the
  // call again.
  Task<Status> Record(const DeferredOutcome& outcome);
  // Records the outcome of a call its turn waited for: tried once while the turn waits;
  // one the store could not take (a database restarting) is recorded in the background
  // until it lands (Record, detached on the turn's executor), so that no sweep runs the
  // call a second time, and the turn answers now. `keep_alive` owns this runner.
  Task<void> RecordAwaited(const DeferredOutcome& outcome, std::shared_ptr<const void> keep_alive);

  // What the person is told when `entry` failed: its tool's failure_note, naming the
  // plan step it was queued for, if any.
  std::string FailureNote(const OutboxEntry& entry) const;
  // `reply` without its sentences that speak of the actions of `finished`'s failed calls
  // as done or to come, judged per call (policy/act/undone_claims.h: "I sent David the
  // summary" stays when that send ran and the one to Maria failed): in `await` mode the
  // note then says what was not done, once, instead of following a claim of it.
  // `user_text`: the turn's request.
  std::string WithoutClaims(std::string_view user_text, std::string_view reply,
                            const std::vector<DeferredResult>& finished) const;

  // Appended to the idempotency key a backend is sent (RuntimeParts::idempotency_salt).
  std::string key_salt;
  // Called with the session id whenever a failure was stored as a notice.
  std::function<void(const std::string& session_id)> on_notice;
  // Called with each event of a result nobody waits for, once it is recorded.
  std::function<void(const std::string& session_id, const TraceEvent& event)> on_event;

 private:
  // Record, detached on `ex` (RecordAwaited's second chance).
  void RecordLater(const boost::asio::any_io_executor& ex, DeferredOutcome outcome, std::shared_ptr<const void> keep_alive);
  // Claims and runs one entry; nullopt when another worker already finished it.
  Task<std::optional<DeferredResult>> Run(OutboxEntry entry, DeferredTurn turn, DeferredRun mode);

  const AgentConfig& config_;
  const ToolRouter& tools_;
  StoreCalls& calls_;
  Clock& clock_;
  ActionReader reader_;  // over config_.tools
};

}  // namespace reins
