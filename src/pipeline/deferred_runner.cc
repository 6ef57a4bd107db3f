#include "pipeline/deferred_runner.h"

#include <memory>
#include <set>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>

#include "net/no_throw.h"
#include "policy/act/undone_claims.h"
#include "telemetry/turn_spans.h"
#include "tools/timed_invoke.h"

namespace reins {
namespace {

using namespace boost::asio::experimental::awaitable_operators;

// What the turn waiting in `await` mode shares with the calls it started.
struct AwaitState {
  explicit AwaitState(const boost::asio::any_io_executor& ex, size_t n)
      : done(ex, boost::asio::steady_timer::time_point::max()), results(n), left(n) {}
  boost::asio::steady_timer done;  // cancelled when the last call finishes
  std::vector<std::optional<DeferredResult>> results;
  size_t left;
  bool waiting = true;
};

Task<void> WaitUntilDone(std::shared_ptr<AwaitState> state) {
  if (state->left == 0) co_return;
  auto wait = state->done.async_wait(kNoThrow);
  co_await std::move(wait);
}

}  // namespace

std::string DeferredRunner::FailureNote(const OutboxEntry& entry) const {
  const ToolDef* def = config_.FindTool(entry.tool);
  std::string note = def != nullptr ? def->failure_note : DefaultFailureNote("that request");
  if (!entry.step_id.empty()) note += " (This was for step " + entry.step_id + " of the plan.)";
  return note;
}

std::string DeferredRunner::WithoutClaims(std::string_view user_text, std::string_view reply,
                                          const std::vector<DeferredResult>& finished) const {
  std::vector<CallOf> undone, done;
  for (const DeferredResult& r : finished) (r.result.success ? done : undone).push_back({r.entry.tool, r.entry.args});
  return undone.empty() ? std::string(reply) : WithoutClaimsOf(reader_, user_text, reply, undone, done);
}

namespace {

std::function<Status(Store&)> Recording(const DeferredOutcome& outcome) {
  return [&outcome](Store& store) { return store.RecordDeferredOutcome(outcome); };
}

}  // namespace

Task<Status> DeferredRunner::Record(const DeferredOutcome& outcome) {
  co_return co_await calls_.RunUntilReachable(Recording(outcome), clock_);
}

Task<void> DeferredRunner::RecordAwaited(const DeferredOutcome& outcome, std::shared_ptr<const void> keep_alive) {
  Status recorded = co_await calls_.Run(Recording(outcome));
  if (recorded.code() != StatusCode::kUnavailable) co_return;
  // Named, and spawned from a plain function: GCC 12 mishandles a temporary of a
  // co_await expression (here the lambda would be one).
  const boost::asio::any_io_executor executor = co_await boost::asio::this_coro::executor;
  RecordLater(executor, outcome, std::move(keep_alive));
}

void DeferredRunner::RecordLater(const boost::asio::any_io_executor& ex, DeferredOutcome outcome,
                                 std::shared_ptr<const void> keep_alive) {
  boost::asio::co_spawn(
      ex, [this, outcome = std::move(outcome), keep_alive]() -> Task<void> { (void)co_await Record(outcome); },
      boost::asio::detached);
}

Task<std::optional<DeferredResult>> DeferredRunner::Run(OutboxEntry entry, DeferredTurn turn, DeferredRun mode) {
  // A claim the store could not take is tried again: until it is taken nobody runs the
  // call, and a sweep would run it only once the store's outbox lapse has passed.
  std::function<Result<bool>(Store&)> claim = [&entry, this](Store& store) {
    return store.ClaimOutbox(entry.key, clock_.NowMs());
  };
  Result<bool> claimed = co_await calls_.RunUntilReachable(std::move(claim), clock_);
  if (claimed.ok() && !*claimed) co_return std::nullopt;  // done by an earlier run
  DeferredResult r;
  r.entry = entry;
  int64_t start = clock_.NowMs();
  const ToolDef* tool = config_.FindTool(entry.tool);
  ToolBackend* backend = tool != nullptr ? tools_.Find(entry.tool) : nullptr;
  if (!claimed.ok()) {
    r.result = ResultEnvelope::Failure("the outbox could not be updated: " + claimed.status().message());
  } else if (backend == nullptr) {
    r.result = ResultEnvelope::Failure("tool " + entry.tool + " has no backend configured");
  } else {
    ToolRequest request{entry.tool, entry.args, entry.session_id, entry.turn_id, entry.key + key_salt};
    request.timeout_ms = tool->timeout_ms;
    if (backend->ForwardsTraceContext()) {
      const telemetry::TurnIds ids = telemetry::IdsOfTurn(entry.session_id, turn.number, turn.traceparent);
      request.traceparent =
          telemetry::FormatTraceparent({ids.turn.trace_id, telemetry::DeferredSpanId(ids, entry.key), ids.turn.sampled});
    }
    // A hanging backend is bounded by the tool's own timeout.
    std::optional<Result<Json>> answer = co_await InvokeWithin(*backend, request, clock_);
    if (!answer) {
      r.result = ResultEnvelope::Failure("timed out after " + std::to_string(tool->timeout_ms) + " ms");
    } else if (Result<Json>& raw = *answer; !raw.ok()) {
      r.result = ResultEnvelope::Failure(raw.status().message());
    } else {
      r.result = NormaliseToolResult(std::move(*raw));
    }
  }
  r.latency_ms = clock_.NowMs() - start;
  r.event = {EventType::kDeferredExecuted, turn.number, clock_.NowMs(),
             Json{{"name", entry.tool}, {"args", entry.args}, {"idempotency_key", entry.key},
                  {"result", EnvelopeToJson(r.result)}, {"success", r.result.success},
                  {"next_action", NextActionName(r.result.next_action)}, {"latency_ms", r.latency_ms},
                  {"mode", kDeferredRuns.Name(mode)}}};
  co_return r;
}

Task<void> DeferredRunner::RecordUnattended(const DeferredResult& r) {
  DeferredOutcome o{r.entry.key, r.result, r.latency_ms, {r.event}, "", "", clock_.NowMs()};
  if (!r.result.success) {
    o.notice = FailureNote(r.entry);
    o.events.push_back({EventType::kNoticeCreated, r.event.turn, clock_.NowMs(), {{"text", o.notice}, {"tool", r.entry.tool}}});
  }
  // Tried until the store takes it (Record). One it refuses otherwise leaves the entry
  // unfinished: a restart runs it again under the same key, which the backend
  // de-duplicates.
  Status recorded = co_await Record(o);
  if (!recorded.ok()) co_return;
  if (!o.notice.empty() && on_notice) on_notice(r.entry.session_id);
  for (const TraceEvent& e : o.events) {
    if (on_event) on_event(r.entry.session_id, e);
  }
}

void DeferredRunner::Spawn(const boost::asio::any_io_executor& ex, std::vector<OutboxEntry> entries,
                           DeferredTurn turn, DeferredRun mode, std::shared_ptr<const void> keep_alive) {
  for (OutboxEntry& entry : entries) {
    boost::asio::co_spawn(
        ex,
        [this, entry = std::move(entry), turn, mode, keep_alive]() -> Task<void> {
          std::optional<DeferredResult> r = co_await Run(entry, turn, mode);
          if (r) co_await RecordUnattended(*r);
        },
        boost::asio::detached);
  }
}

Task<std::vector<DeferredResult>> DeferredRunner::RunAwait(std::vector<OutboxEntry> entries, DeferredTurn turn,
                                                          std::shared_ptr<const void> keep_alive, DeferredRun mode) {
  auto ex = co_await boost::asio::this_coro::executor;
  auto state = std::make_shared<AwaitState>(ex, entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    boost::asio::co_spawn(
        ex,
        [this, state, i, entry = std::move(entries[i]), turn, mode, keep_alive]() -> Task<void> {
          std::optional<DeferredResult> r = co_await Run(entry, turn, mode);
          if (r && state->waiting) {
            state->results[i] = std::move(r);
          } else if (r) {
            co_await RecordUnattended(*r);  // the turn stopped waiting: report it with the next reply
          }
          if (--state->left == 0) state->done.cancel();
        },
        boost::asio::detached);
  }
  co_await (WaitUntilDone(state) || clock_.Sleep(config_.deferred.timeout_ms));
  state->waiting = false;
  std::vector<DeferredResult> finished;
  for (std::optional<DeferredResult>& r : state->results) {
    if (r) finished.push_back(std::move(*r));
  }
  co_return finished;
}

}  // namespace reins
