#include <algorithm>

#include <boost/asio/this_coro.hpp>

#include "pipeline/runtime_impl.h"

namespace reins {
namespace {

// True when the turn's reply went out sentence by sentence (its reply.final says how much).
bool Streamed(const TurnResult& result) {
  for (const TraceEvent& e : result.events) {
    if (e.type == EventType::kReplyFinal) return e.data.contains("streamed");
  }
  return false;
}

// Await mode: one note per failed tool, appended to the reply; tools sharing a note share
// one mention (I5). The reply loses its sentences that claim those writes first (unless
// it was streamed: those sentences are out already). The notes, in order: none, and the
// reply as it was, when every call succeeded.
std::vector<std::string> NoteFailures(const DeferredRunner& deferred, const std::vector<DeferredResult>& finished,
                                      std::string_view user_text, TurnResult& result) {
  std::vector<std::string> notes;
  for (const DeferredResult& r : finished) {
    if (r.result.success) continue;
    std::string note = deferred.FailureNote(r.entry);
    if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(std::move(note));
  }
  if (!notes.empty()) {
    std::string joined;
    for (const std::string& n : notes) joined += (joined.empty() ? "" : " ") + n;
    if (!Streamed(result)) result.reply = deferred.WithoutClaims(user_text, result.reply, finished);
    result.reply += (result.reply.empty() ? "" : "\n\n") + joined;
  }
  return notes;
}

}  // namespace

std::vector<OutboxEntry> Runtime::Impl::DeferredEntries(const TurnRecord& record) {
  std::vector<OutboxEntry> entries;
  for (const ToolOutcome& t : record.result.tools) {
    if (t.status != ToolOutcome::Status::kDeferred) continue;
    entries.push_back({t.idempotency_key, record.session_id, record.result.turn_id, t.name, t.args,
                       record.deferred_mode, "pending", 0, nullptr, t.step_id});
  }
  return entries;
}

Task<void> Runtime::Impl::RunDeferred(DeferredRunner& deferred, std::shared_ptr<const void> keep_alive,
                                      TurnRecord& record, std::vector<OutboxEntry> entries,
                                      const std::function<void(const TraceEvent&)>& stream) {
  TurnResult& result = record.result;
  DeferredTurn turn{result.turn_number, record.input.is_object() ? record.input.value("traceparent", "") : ""};
  if (record.deferred_mode == DeferredMode::kBackground) {
    deferred.Spawn(co_await boost::asio::this_coro::executor, std::move(entries), std::move(turn), DeferredRun::kBackground,
                   std::move(keep_alive));
    co_return;
  }
  std::vector<DeferredResult> finished = co_await deferred.RunAwait(std::move(entries), std::move(turn), keep_alive);
  const std::string said = record.input.is_object() ? record.input.value("say", "") : "";
  const std::vector<std::string> notes = NoteFailures(deferred, finished, said, result);
  const std::string noted_reply = notes.empty() ? "" : result.reply;
  for (const DeferredResult& r : finished) {
    std::unique_ptr<DeferredOutcome> o = Settle(r, result, &r == &finished.back() ? &notes : nullptr, noted_reply);
    // The reply the person gets is already honest whether or not the store takes it now.
    co_await deferred.RecordAwaited(*o, keep_alive);
    for (const TraceEvent& e : o->events) {
      if (stream) stream(e);
      if (parts.on_event) parts.on_event(record.session_id, e);
    }
  }
}

std::unique_ptr<DeferredOutcome> Runtime::Impl::Settle(const DeferredResult& r, TurnResult& result,
                                                       const std::vector<std::string>* notes,
                                                       const std::string& noted_reply) const {
  for (ToolOutcome& t : result.tools) {
    if (t.idempotency_key != r.entry.key) continue;
    t.result = r.result;
    t.latency_ms = r.latency_ms;
    if (!r.result.success) t.message = r.result.error;
  }
  for (PlanStep& step : result.plan) {
    for (PlanStep::Write& w : step.deferred_writes) {
      if (w.key == r.entry.key) w.outcome = r.result.success ? "succeeded" : "failed";
    }
  }
  result.events.push_back(r.event);
  std::vector<TraceEvent> events = {r.event};
  if (notes != nullptr && !notes->empty()) {
    TraceEvent note{EventType::kDeferredNote, result.turn_number, parts.clock->NowMs(), {{"text", *notes}}};
    result.events.push_back(note);
    events.push_back(note);
  }
  return std::make_unique<DeferredOutcome>(
      DeferredOutcome{r.entry.key, r.result, r.latency_ms, std::move(events), "", noted_reply, parts.clock->NowMs()});
}

Task<Result<int>> Runtime::ResumeOutbox(int64_t quiet_ms) {
  // Claims owed since the store was last unreachable go first, so an idle replica does
  // not leave them to lapse.
  StoreCalls& calls = *impl_->calls;
  std::function<Result<std::vector<OutboxEntry>>(Store&)> unfinished = [this](Store& store) {
    if (store.shared()) impl_->owed_releases.Retry(store);
    return store.UnfinishedOutbox();
  };
  REINS_CO_ASSIGN_OR_RETURN(std::vector<OutboxEntry> entries, co_await calls.Run(std::move(unfinished)));
  std::shared_ptr<Impl::Catalog> catalog = impl_->Current();
  const int64_t now = impl_->parts.clock->NowMs();
  // A staged write (a streamed reply's) is run only once its turn is surely gone: not
  // running here, and on a shared store older than any turn's claim on its session.
  const AgentConfig& config = catalog->config;
  const int64_t turn_ms = config.turn_timeout_ms > 0 ? config.turn_timeout_ms : 600000;
  const int64_t staged_lapse_ms = turn_ms + config.deferred.timeout_ms + 30000;
  int ran = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (quiet_ms > 0 && now - entries[i].updated_at_ms < quiet_ms) continue;
    if (entries[i].status == "staged") {
      bool running_here;
      {
        std::lock_guard lock(impl_->mu);
        running_here = impl_->staging_turns.count(entries[i].turn_id) > 0;
      }
      if (running_here || (calls.store().shared() && now - entries[i].updated_at_ms < staged_lapse_ms)) continue;
    }
    std::vector<OutboxEntry> one;
    one.push_back(entries[i]);
    DeferredTurn unknown;  // a recovered write's turn is not in memory: its own trace
    std::vector<DeferredResult> done = co_await catalog->deferred->RunAwait(std::move(one), std::move(unknown), catalog, DeferredRun::kResumed);
    for (const DeferredResult& r : done) co_await catalog->deferred->RecordUnattended(r);
    ran += static_cast<int>(done.size());
  }
  co_return ran;
}

}  // namespace reins
