#include "pipeline/runtime_impl.h"

#include <algorithm>

namespace reins {
namespace {

// Events a streaming caller may see while the turn runs: what the runtime is doing,
// never what the person will be told (that waits for the commit, I12).
bool IsProgressEvent(EventType type) {
  switch (type) {
    case EventType::kTurnStarted:
    case EventType::kModelCall:
    case EventType::kModelError:
    case EventType::kToolExecuted:
    case EventType::kToolProgress:
    case EventType::kToolRejected:
    case EventType::kToolSkipped:
    case EventType::kToolDeferred:
    case EventType::kPlanInvalid:
    case EventType::kPlanFallback:
    case EventType::kPlanResumed:
    case EventType::kPlanAbandoned:
    case EventType::kPlanStepStarted:
    case EventType::kPlanStepRetry:
    case EventType::kPlanStepFinished:
      return true;
    default:
      return false;
  }
}

// A turn's record, from the thread's spare blocks (FromSpareBlocks): 1.2 KB.
struct RecordBlock : FromSpareBlocks<RecordBlock> {
  TurnRecord record;
};

}  // namespace

Task<TurnResultBox> Runtime::Impl::RunTurn(std::string session_id, std::unique_ptr<TurnInput> input) {
  // One turn of a session at a time, in arrival order.
  const int64_t arrived_ms = parts.clock->NowMs();
  co_await queue.Acquire(session_id);
  struct Leave {  // the next turn in line goes on however this one ends
    Impl& impl;
    const std::string& session_id;
    ~Leave() {
      impl.cache->Settle(session_id);
      impl.queue.Release(session_id);
    }
  } leave{*this, session_id};
  // Three steps, each a coroutine of its own, around one heap object: this frame, which
  // lives as long as the turn waits on its model, holds a pointer to the turn and not
  // what admitting and committing it kept (GCC keeps every local and temporary of a
  // coroutine in its frame for the coroutine's whole life).
  Result<std::unique_ptr<TurnRun>> admitted = co_await Admit(session_id, std::move(input), arrived_ms);
  if (!admitted.ok()) co_return admitted.status();
  TurnRun& run = **admitted;
  Status ran = co_await run.catalog->pipeline->Run(run.ctx, run.phase);
  if (!ran.ok()) {
    run.RollBack();
    co_return ran;
  }
  co_return co_await Finish(session_id, run);
}

Task<Result<std::shared_ptr<CachedSession>>> Runtime::Impl::Load(const std::string& session_id, size_t max_chars) {
  if (std::shared_ptr<CachedSession> cached = cache->Find(session_id)) co_return cached;
  std::function<Result<std::shared_ptr<CachedSession>>(Store&)> read = [&session_id, max_chars](Store& store) {
    return CachedSession::Read(store, session_id, max_chars);
  };
  REINS_CO_ASSIGN_OR_RETURN(std::shared_ptr<CachedSession> loaded, co_await calls->Run(std::move(read)));
  co_return cache->Remember(session_id, std::move(loaded));
}

Task<Result<std::unique_ptr<Runtime::Impl::TurnRun>>> Runtime::Impl::Admit(const std::string& session_id,
                                                                           std::unique_ptr<TurnInput> input,
                                                                           int64_t arrived_ms) {
  // Replicas sharing the store: this turn holds the session's claim to its very end
  // (its commit, or its deferred calls' end), as it holds the in-process queue.
  const std::shared_ptr<Catalog> config_now = Current();
  const int64_t turn_ms = config_now->config.turn_timeout_ms > 0 ? config_now->config.turn_timeout_ms : 600000;
  const int64_t claim_ttl_ms = turn_ms + config_now->config.deferred.timeout_ms + 30000;
  const bool shared = calls->store().shared();
  REINS_CO_ASSIGN_OR_RETURN(ReplicaClaim claim, co_await ClaimForTurn(*claims, *calls, *parts.clock, owed_releases,
                                                                       session_id, replica_id, claim_ttl_ms, turn_ms));
  if (claim.held()) cache->ForgetIfStale(session_id, claim.turn_count());
  REINS_CO_ASSIGN_OR_RETURN(std::shared_ptr<CachedSession> loaded,
                            co_await Load(session_id, config_now->config.max_context_chars));
  if (!input->idempotency_key.empty()) {
    // Checked inside the session's queue: a retry that arrives while the first try
    // runs waits for it, then finds its key.
    Status unused = co_await CheckKeyUnused(session_id, *input);
    if (!unused.ok()) co_return unused;
  }
  // The turn works on the cached session in place. If it is refused or cannot be
  // committed, the state is restored and the history cut back, so the session is
  // exactly as it was (turns of one session never overlap; see runtime.h).
  auto run = std::make_unique<TurnRun>(Current(), std::move(loaded), std::move(claim), *parts.clock);
  CachedSession& session = *run->session;
  TurnContext& ctx = run->ctx;
  const AgentConfig& config = run->catalog->config;
  ctx.older_history_left_out = session.older_left_out;
  ctx.key_salt = parts.idempotency_salt;
  // The turn's budget up to its reply runs from now: waiting in the queue was not it.
  if (config.turn_timeout_ms > 0) ctx.deadline_ms = parts.clock->NowMs() + config.turn_timeout_ms;
  ctx.session_id = session_id;
  ctx.result.turn_id = ids->New("t_");
  ctx.input = std::move(*input);
  input.reset();
  if (ctx.input.on_event) StreamTo(*run);
  ctx.result.turn_number = session.turn_count + 1;
  // Whether a notice may wait: on a shared store the claim read it just now, any
  // replica's (a session this replica just read from the store included); otherwise
  // this runtime knows.
  if (shared && run->claim.held() ? run->claim.notices() : session.may_have_notices.load()) {
    std::function<Result<std::vector<Notice>>(Store&)> pending = [&session_id](Store& store) {
      return store.PendingNotices(session_id);
    };
    Result<std::vector<Notice>> notices = co_await calls->Run(std::move(pending));
    if (notices.ok()) {
      for (const Notice& n : *notices) ctx.extend().pending_notices.emplace_back(n.id, n.text);
      session.may_have_notices = !notices->empty();
    }
  }
  if (config.floor.enabled) {
    std::function<Result<Lease>(Store&)> lease = [&session_id](Store& store) { return store.LoadLease(session_id); };
    REINS_CO_ASSIGN_OR_RETURN(Lease held, co_await calls->Run(std::move(lease)));
    ctx.SetLease(std::move(held));
  }
  ctx.waited_ms = parts.clock->NowMs() - arrived_ms;  // the floor policy refuses a stale turn
  co_return std::move(run);
}

void Runtime::Impl::StreamTo(TurnRun& run) {
  TurnContext& ctx = run.ctx;
  run.streaming = std::make_unique<TurnRun::Streaming>();
  run.streaming->stream = std::move(ctx.input.on_event);
  // Progress streams live, but only once the input is accepted: a refused turn (409,
  // 422...) must not have begun a stream (docs/http-api.md).
  ctx.streamed = std::make_unique<TurnContext::Streamed>();
  ctx.streamed->on_emit = [r = &run](const TraceEvent& e) {
    if (!IsProgressEvent(e.type)) return;
    if (!r->ctx.admitted) {
      r->streaming->held.push_back(e);
      return;
    }
    r->streaming->Flush();
    r->streaming->stream(e);
  };
  // The reply streams as it is written; each sentence waits for the writes before it.
  ctx.streamed->send_reply_text = [r = &run](std::string_view text) {
    const TraceEvent delta{EventType::kReplyDelta, r->ctx.result.turn_number, r->ctx.clock.NowMs(), Json{{"text", text}}};
    r->streaming->stream(delta);
  };
  ctx.streamed->stage_writes = [this](TurnContext& c) { return StageWrites(c); };
}

Task<TurnResultBox> Runtime::Impl::Finish(const std::string& session_id, TurnRun& run) {
  TurnContext& ctx = run.ctx;
  CachedSession& session = *run.session;
  Catalog& catalog = *run.catalog;
  static const std::function<void(const TraceEvent&)> kNoStream;
  const std::function<void(const TraceEvent&)>& stream = run.streaming ? run.streaming->stream : kNoStream;
  // On the heap: the record is needed only once the turn has run.
  const auto recorded = std::make_unique<RecordBlock>();
  TurnRecord& record = recorded->record;
  const bool begins_session = session.unwritten != nullptr;
  Record(session_id, run, record);
  Status committed = co_await commits->Commit(record);
  if (record.outbox_staged) {
    // Committed, its staged writes are pending (or withdrawn); not committed, they are
    // what a crash leaves: the person may have read that they were done, and recovery
    // runs them (docs/streaming.md).
    std::lock_guard lock(mu);
    staging_turns.erase(record.result.turn_id);
  }
  if (!committed.ok()) {
    run.RollBack();
    // Keep the store's code: a lease moved by another writer is a conflict, not a crash.
    co_return Status(committed.code(), "the turn could not be stored: " + committed.message());
  }
  run.settled = true;
  if (record.release_claim) run.claim.EndedByCommit();
  if (begins_session) {
    session.unwritten.reset();
    Stored(*record.new_session, run.session);
  }
  session.turn_count = record.result.turn_number;
  session.Trim(catalog.config.max_context_chars);
  // A tool call still waiting on the withdrawn question (an MCP elicitation) lets go.
  // Unless this turn asked anew through such a call: the backend let the old call go
  // when the new one began, and a withdrawal now would reach the new question.
  const PendingClarification* asked =
      run.state_before && run.state_before->pending_clarification ? &*run.state_before->pending_clarification : nullptr;
  const auto& asks_now = session.state.pending_clarification;
  if (asked && !record.withdrawn_clarification_id.empty() && asked->id == record.withdrawn_clarification_id &&
      !(asks_now && catalog.tools.ResumesQuestions(asks_now->tool))) {
    if (ToolBackend* backend = catalog.tools.Find(asked->tool)) backend->Withdraw(session_id);
  }
  // The turn and its outbox rows are durable: only now may deferred calls run (I12).
  if (parts.after_commit) parts.after_commit(record.result.turn_id);
  if (stream) run.streaming->Flush();
  if (parts.on_turn) parts.on_turn(session_id, record.result.events);
  for (const TraceEvent& e : record.result.events) {
    if (stream && !IsProgressEvent(e.type)) stream(e);  // the reply and what it asks, now durable
    if (parts.on_event) parts.on_event(session_id, e);
  }
  const std::string delivered = record.result.reply;
  // The runner's coroutine only for a turn that deferred a call.
  if (std::vector<OutboxEntry> entries = DeferredEntries(record); !entries.empty()) {
    co_await RunDeferred(*catalog.deferred, run.catalog, record, std::move(entries), stream);
  }
  if (record.result.reply != delivered && !ctx.history().empty() && ctx.history().back().role == Role::kAssistant) {
    // The failure note, for the model's next call too (the turn's context is the session's).
    ctx.EditMessage(ctx.history().size() - 1).text = record.result.reply;
  }
  // The result the caller gets says what is still pending after the turn (a
  // safety-override turn, a blocked one), not only what this turn asked; the stored
  // record keeps what the turn itself opened.
  TurnResult& result = record.result;
  if (!result.clarification && session.state.pending_clarification) result.clarification = *session.state.pending_clarification;
  // One that lapsed while a turn was held back (a blocked or cancelled turn does not
  // reach the lapse) is not offered: GET session hides it too.
  const HeapOptional<PendingApproval>& pending = session.state.pending_approval;
  if (!result.approval && pending && !pending->LapsedAt(parts.clock->NowMs())) result.approval = *pending;
  co_return std::move(result);
}

void Runtime::Impl::Record(const std::string& session_id, TurnRun& run, TurnRecord& record) const {
  TurnContext& ctx = run.ctx;
  CachedSession& session = *run.session;
  const Catalog& catalog = *run.catalog;
  record.session_id = session_id;
  if (session.unwritten) record.new_session = std::move(*session.unwritten);  // written with this commit
  record.speaker = ctx.input.speaker;
  record.input = TurnInputToJson(ctx.input);
  record.result = std::move(ctx.result);
  const std::vector<Message>& messages = session.history.messages();
  record.new_messages.assign(messages.begin() + static_cast<std::ptrdiff_t>(ctx.history_base), messages.end());
  record.session_state = session.state.ToJson();
  const PendingDecisions& decided = ctx.decisions();
  if (decided.answered) {
    record.answered_clarification_id = decided.answered->id;
    record.chosen_option_id = decided.chosen_option_id;
  }
  record.withdrawn_clarification_id = decided.withdrawn_clarification_id;
  if (decided.decided_approval) {
    record.decided_approval_id = decided.decided_approval->id;
    record.approval_decision = decided.approval_answer.decision ? "granted" : "denied";
    record.approved_args = decided.approved_args;
    record.approval_message = decided.approval_answer.message;
  }
  record.cancelled_approval_id = decided.cancelled_approval_id;
  record.lapsed_approval_id = decided.lapsed_approval_id;

  record.delivered_notices = ctx.extras().delivered_notices;
  record.lease_change = ctx.lease_change();
  record.lease_expected_version = ctx.lease().version;
  const Lease& after = ctx.lease_change() ? *ctx.lease_change() : ctx.lease();
  if (after.ActiveAt(parts.clock->NowMs())) record.result.lease = after;
  record.deferred_mode = catalog.config.deferred.mode;
  record.created_at_ms = parts.clock->NowMs();
  record.claim_token = run.claim.token();
  // Nothing of the turn runs after its commit unless it deferred a call: the commit
  // ends the claim then, and the session's next turn, here or on another replica,
  // waits for no release.
  record.release_claim = run.claim.held() && std::none_of(record.result.tools.begin(), record.result.tools.end(),
                                                          [](const ToolOutcome& t) {
                                                            return t.status == ToolOutcome::Status::kDeferred;
                                                          });
  record.outbox_staged = run.streaming && ctx.Slot<Staged>().any;  // no slot for a turn that does not stream
}

Task<Status> Runtime::Impl::CheckKeyUnused(const std::string& session_id, const TurnInput& input) {
  const std::string& key = input.idempotency_key;
  std::function<Result<std::optional<StoredTurn>>(Store&)> find = [&session_id, &key](Store& store) {
    return store.FindTurnByKey(session_id, key);
  };
  REINS_CO_ASSIGN_OR_RETURN(std::optional<StoredTurn> earlier, co_await calls->Run(std::move(find)));
  if (!earlier) co_return OkStatus();
  // The same request, whichever trace the retry came in and whatever words it was in.
  Json asked = earlier->input, now = TurnInputToJson(input);
  for (const char* incidental : {"traceparent", "words"}) {
    if (asked.is_object()) asked.erase(incidental);
    now.erase(incidental);
  }
  if (asked != now) {
    co_return InvalidArgument("idempotency key '" + key + "' was already used by turn " +
                              std::to_string(earlier->turn_number) +
                              " for a different request; use a new key for a new request");
  }
  co_return AlreadyExists("a turn with idempotency_key '" + key + "' already ran");
}

Task<Status> Runtime::Impl::StageWrites(TurnContext& ctx) {
  Staged& staged = ctx.Slot<Staged>();
  std::vector<OutboxEntry> entries;
  for (; staged.through < ctx.result.tools.size(); ++staged.through) {
    const ToolOutcome& t = ctx.result.tools[staged.through];
    if (t.status != ToolOutcome::Status::kDeferred) continue;
    entries.push_back({t.idempotency_key, std::string(ctx.session_id), ctx.result.turn_id, t.name, t.args,
                       ctx.config.deferred.mode, "staged", 0, nullptr, t.step_id, parts.clock->NowMs()});
  }
  if (entries.empty()) co_return OkStatus();
  if (!staged.any) {
    std::lock_guard lock(mu);
    staging_turns.insert(ctx.result.turn_id);
  }
  staged.any = true;
  std::function<Status(Store&)> stage = [&entries](Store& store) { return store.StageOutbox(entries); };
  Status written = co_await calls->Run(std::move(stage));
  if (!written.ok()) written = Status(written.code(), "the writes this turn queued could not be stored before its reply: " + written.message());
  co_return written;
}

}  // namespace reins
