// POST .../turns (a JSON answer or an SSE stream), a new session's first turn (POST
// /v1/sessions with a `turn`) and DELETE .../lease (a cancel turn). Turns run on the
// event loop of the connection that brought them; a retried request with a used
// idempotency key gets the first try's stored result.
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>

#include "domain/json_text.h"
#include "server/api_impl.h"
#include "server/stored_turn_json.h"

namespace reins {
namespace {

// The input on the heap, handed to the runtime's coroutine: a parameter of this frame,
// which lives as long as the turn, would hold its ~230 bytes throughout.
Task<void> RunTurnInto(Runtime& rt, std::string id, std::unique_ptr<TurnInput> in, Api::Impl::SharedTurnResult out) {
  Task<TurnResultBox> turn = rt.RunTurnOnHeap(std::move(id), std::move(in));
  TurnResultBox ran = co_await std::move(turn);
  *out = std::move(*ran.result);
}

bool IsReplay(const Status& s, const std::string& key) { return s.code() == StatusCode::kAlreadyExists && !key.empty(); }

bool WantsEventStream(const ServerRequest& req) {
  return req.Header("accept").find("text/event-stream") != std::string::npos;
}

}  // namespace

std::optional<std::shared_ptr<void>> Api::Impl::TakeTurnSlot() {
  if (++inflight > options.max_inflight) {
    --inflight;
    return std::nullopt;
  }
  auto self = shared_from_this();
  return std::shared_ptr<void>(nullptr, [self](void*) { --self->inflight; });
}

Api::Impl::SharedTurnResult Api::Impl::SpawnStreamedTurn(const boost::asio::any_io_executor& here, std::string id,
                                                          TurnInput in, std::shared_ptr<EventStream> stream,
                                                          std::shared_ptr<void> slot) {
  in.on_event = [stream](const TraceEvent& e) { stream->PushTurnEvent(e); };
  auto result = std::make_shared<std::optional<Result<TurnResult>>>();
  // The turn is still stored and its writes still run when nobody listens any more; its
  // log line is written when it ends.
  auto self = shared_from_this();
  boost::asio::co_spawn(here, RunTurnInto(runtime, id, std::make_unique<TurnInput>(std::move(in)), result),
                        [self, id, stream, result, slot](std::exception_ptr e) {
                          if (e) *result = Result<TurnResult>(Internal("the turn failed unexpectedly"));
                          if (result->has_value() && (*result)->ok()) LogTurn(id, ***result, self->NowMs());
                          stream->Finish();
                        });
  return result;
}

// The stored result of the turn that already used `key`, if any.
Task<std::optional<Json>> Api::Impl::Replay(std::string id, std::string key) {
  const SessionView& view = sessions;
  std::function<std::optional<Json>()> read = [&view, id, key]() -> std::optional<Json> {
    Result<std::optional<StoredTrace>> found = view.TurnByKey(id, key);
    if (!found.ok() || !*found) return std::nullopt;
    return StoredTurnJson((*found)->turns.front(), (*found)->invocations);
  };
  co_return co_await OnStore<std::optional<Json>>(std::move(read));
}

// The response is held (ServerResponse::Hold) and the turn spawned: this frame, and
// those of the request's path, are gone while the turn waits on its model (a thousand
// waiting turns held about 1.6 KB each in them: docs/PERFORMANCE.md, round 22). Where the
// response cannot be held, this frame waits with the turn; reading the request and
// answering the result (the refusals, a replay, the text) run in coroutines of their own.
Task<void> Api::Impl::PostTurn(Exchange x) {
  auto in = std::make_unique<TurnInput>();
  std::shared_ptr<void> slot;
  if (!co_await AcceptTurn(x, in.get(), &slot)) co_return;
  // (x.session_id lives in the caller's frame, as long as this one.)
  if (WantsEventStream(x.req)) co_return co_await StreamTurn(x.res, x.session_id, std::move(in), std::move(slot));
  const auto here = co_await boost::asio::this_coro::executor;
  if (std::shared_ptr<ServerResponse> held = x.res.Hold(Recorder(x))) {
    TurnAnswer to{x.session_id, in->idempotency_key, TurnAnswer::Session::kExisting};
    Task<TurnResultBox> turn = runtime.RunTurnOnHeap(x.session_id, std::move(in));
    SpawnHeldTurn(here, std::move(turn), std::move(to), std::move(held), std::move(slot));
    co_return;
  }
  const TurnAnswer to{x.session_id, in->idempotency_key, TurnAnswer::Session::kExisting};
  Task<TurnResultBox> turn = runtime.RunTurnOnHeap(x.session_id, std::move(in));
  TurnResultBox ran = co_await std::move(turn);
  co_await AnswerTurn(x.res, to, std::move(ran.result));
}

// POST /v1/sessions with the session's first turn. On this process's own store the
// session is written in the turn's commit (Runtime::StartSessionOnHeap): one request
// and one transaction where the two requests made two, and a refused turn leaves no
// session. Where the session has to exist before its turn (a tenant's quota counts it
// first; a streamed turn's writes may be staged before its commit), it is created first
// and the turn runs as any other; the stream names it in its `Reins-Session-Id` header.
Task<void> Api::Impl::StartSession(Exchange x, Json metadata, std::unique_ptr<TurnInput> first) {
  first->traceparent = TraceparentOf(x.req);
  std::optional<std::shared_ptr<void>> slot = TakeTurnSlot();
  if (!slot) co_return co_await SendError(x.res, Overloaded(), RetryAfter(1));
  const auto here = co_await boost::asio::this_coro::executor;
  const bool streamed = WantsEventStream(x.req);
  if (streamed || store_shared || (keys && keys->MaxSessions(x.tenant))) {
    Result<std::string> created = co_await NewSession(std::move(metadata), x.tenant);
    if (!created.ok()) co_return co_await SendError(x.res, SessionRefusal(created.status()));
    if (streamed) {
      Headers named = {{"Reins-Session-Id", *created}};
      co_return co_await StreamTurn(x.res, *created, std::move(first), std::move(*slot), std::move(named));
    }
    // (Named, not temporaries in the co_await expressions: GCC 12, see Api::Impl::On.)
    const TurnAnswer to{*created, std::string(), TurnAnswer::Session::kCreatedFirst};
    Task<TurnResultBox> turn = runtime.RunTurnOnHeap(to.session_id, std::move(first));
    TurnResultBox ran = co_await std::move(turn);
    co_return co_await AnswerTurn(x.res, to, std::move(ran.result));
  }
  TurnAnswer to{std::string(), std::string(), TurnAnswer::Session::kBegunByTurn};
  Task<TurnResultBox> turn = runtime.StartSessionOnHeap(std::move(first), metadata, x.tenant, &to.session_id);
  if (std::shared_ptr<ServerResponse> held = x.res.Hold(Recorder(x))) {
    SpawnHeldTurn(here, std::move(turn), std::move(to), std::move(held), std::move(*slot));
    co_return;
  }
  TurnResultBox ran = co_await std::move(turn);
  co_await AnswerTurn(x.res, to, std::move(ran.result));
}

// The completion handler waits with the turn, in asio's frame that runs it: it keeps
// the connection's executor (56 bytes) only where that is not the first loop's, which
// with one I/O thread it is.
void Api::Impl::SpawnHeldTurn(const boost::asio::any_io_executor& here, Task<TurnResultBox> turn, TurnAnswer to,
                              std::shared_ptr<ServerResponse> held, std::shared_ptr<void> slot) {
  std::unique_ptr<boost::asio::any_io_executor> elsewhere;
  if (here != first_loop) elsewhere = std::make_unique<boost::asio::any_io_executor>(here);
  auto answer = [self = shared_from_this(), elsewhere = std::move(elsewhere), to = std::move(to),
                 held = std::move(held), slot = std::move(slot)](std::exception_ptr thrown, TurnResultBox ran) mutable {
    TurnOutcome outcome = std::move(ran.result);
    if (thrown || !outcome) outcome = std::make_unique<Result<TurnResult>>(Internal("the turn failed unexpectedly"));
    Task<void> answering = self->AnswerHeld(std::move(held), std::move(to), std::move(outcome), std::move(slot));
    boost::asio::co_spawn(elsewhere ? *elsewhere : self->first_loop, std::move(answering), boost::asio::detached);
  };
  boost::asio::co_spawn(here, std::move(turn), std::move(answer));
}

// The connection goes on once `held` is let go, with this frame.
Task<void> Api::Impl::AnswerHeld(std::shared_ptr<ServerResponse> held, TurnAnswer to, TurnOutcome outcome,
                                 std::shared_ptr<void> /*slot*/) {
  co_await AnswerTurn(*held, to, std::move(outcome));
}

// Reads a turn's request and takes it a place among the turns in flight; false when
// refused (the refusal answered).
Task<bool> Api::Impl::AcceptTurn(Exchange x, TurnInput* in, std::shared_ptr<void>* slot) {
  std::optional<ApiError> bad = ParseTurnBody(x.req.body, x.req.Header("idempotency-key"), in);
  if (!bad) bad = ActAs(x.grant, *in);
  if (bad) {
    co_await SendError(x.res, *bad);
    co_return false;
  }
  in->traceparent = TraceparentOf(x.req);
  std::optional<std::shared_ptr<void>> taken = TakeTurnSlot();
  if (!taken) {
    co_await SendError(x.res, Overloaded(), RetryAfter(1));
    co_return false;
  }
  *slot = std::move(*taken);
  co_return true;
}

// A turn that ran: its result (a new session's, for the turn that began it), the first
// try's for a retried key, or the refusal.
Task<void> Api::Impl::AnswerTurn(ServerResponse& res, const TurnAnswer& to, TurnOutcome outcome) {
  const Result<TurnResult>& r = *outcome;
  if (!r.ok() && IsReplay(r.status(), to.key)) {
    if (std::optional<Json> first = co_await Replay(to.session_id, to.key)) {
      co_return co_await SendJson(res, 200, *first, ReplayHeader());
    }
  }
  if (!r.ok()) co_return co_await SendRefusal(res, to.session_id, r.status());
  LogTurn(to.session_id, *r, NowMs());
  std::string text = TurnResultText(*r, true);
  if (to.session == TurnAnswer::Session::kExisting) co_return co_await SendJsonText(res, 200, std::move(text));
  if (to.session == TurnAnswer::Session::kBegunByTurn) metrics.Inc("reins_sessions_created_total");
  co_await SendJsonText(res, 201, SessionBegunText(to.session_id, runtime.Greeting(), text));
}

Task<void> Api::Impl::StreamTurn(ServerResponse& res, std::string id, std::unique_ptr<TurnInput> in,
                                  std::shared_ptr<void> slot, Headers headers) {
  const auto here = co_await boost::asio::this_coro::executor;
  auto stream = std::make_shared<EventStream>(here);
  const std::string key = in->idempotency_key;
  const SharedTurnResult result = SpawnStreamedTurn(here, id, std::move(*in), stream, slot);
  in.reset();
  // The stream begins with the turn's first event: a turn the runtime refuses before it
  // starts gets its own status (409, 422...), never a 200 stream with an error in it.
  if (!co_await stream->Started()) co_return co_await AnswerUnstarted(res, id, key, **result);
  if (!(co_await res.StartStream(std::move(headers))).ok()) co_return;
  // Pump returns true only once the turn finished (and set its result); false when the
  // client went away, while the turn may still be running.
  if (!co_await stream->Pump(res, options.heartbeat_ms)) co_return;
  co_await SendLastEvent(res, **result);
}

// The answer to a streamed turn that ended before its first event (refused, or a
// replay): in a coroutine of its own, so that StreamTurn's frame, which waits with the
// turn, holds none of it.
Task<void> Api::Impl::AnswerUnstarted(ServerResponse& res, const std::string& id, const std::string& key,
                                      const Result<TurnResult>& refused) {
  if (refused.ok()) co_return co_await SendJsonText(res, 200, TurnResultText(*refused, true));
  if (IsReplay(refused.status(), key)) {
    if (std::optional<Json> first = co_await Replay(id, key)) co_return co_await SendJson(res, 200, *first, ReplayHeader());
  }
  co_await SendRefusal(res, id, refused.status());
}

// A refused turn's error, with what the session still has pending: an answer the runtime
// refused (from someone who may not give it, with edits the rule does not allow) leaves
// the question where it was, and the client can show it again without another request.
Task<void> Api::Impl::SendRefusal(ServerResponse& res, const std::string& id, const Status& refused) {
  const ApiError e = FromStatus(refused);
  Json body = ErrorJson(e);
  if (e.status == 403 || e.status == 409 || e.status == 422) {
    const SessionView& view = sessions;
    std::function<Result<SessionSummary>()> read = [&view, id] { return view.Describe(id); };
    Result<SessionSummary> summary = co_await OnStore<Result<SessionSummary>>(std::move(read));
    if (summary.ok() && !summary->pending_approval.is_null()) body["pending_approval"] = summary->pending_approval;
    if (summary.ok() && !summary->pending_clarification.is_null()) {
      body["pending_clarification"] = summary->pending_clarification;
    }
  }
  co_await SendJson(res, e.status, std::move(body));
}

// A streamed turn's last event: its result, or the error it ended with.
Task<void> Api::Impl::SendLastEvent(ServerResponse& res, const Result<TurnResult>& r) {
  const std::string name = r.ok() ? "turn.completed" : "error";
  const std::string data = r.ok() ? TurnResultText(*r, true) : Dump(ErrorJson(FromStatus(r.status())));
  (void)co_await res.Send(name, data);
}

// A turn that only changes what the session holds (a cancel, a revoke): it takes a
// place among the turns in flight like any other. Its result, or nullopt once the
// refusal was sent.
Task<std::optional<TurnResultBox>> Api::Impl::ControlTurn(Exchange& x, std::unique_ptr<TurnInput> in) {
  std::optional<std::shared_ptr<void>> slot = TakeTurnSlot();
  if (!slot) {
    co_await SendError(x.res, Overloaded(), RetryAfter(1));
    co_return std::nullopt;
  }
  const std::string id = x.session_id;
  Task<TurnResultBox> turn = runtime.RunTurnOnHeap(id, std::move(in));
  TurnResultBox outcome = co_await std::move(turn);
  const Result<TurnResult>& r = *outcome.result;
  if (!r.ok()) {
    co_await SendError(x.res, FromStatus(r.status()));
    co_return std::nullopt;
  }
  LogTurn(id, *r, NowMs());
  co_return std::move(outcome);
}

Task<void> Api::Impl::CancelLease(Exchange x) {
  auto in = std::make_unique<TurnInput>();
  in->speaker = "api";
  in->cancel = true;
  Task<std::optional<TurnResultBox>> turn = ControlTurn(x, std::move(in));
  if (!co_await std::move(turn)) co_return;
  co_await x.res.Respond(204, std::string(), std::string());
}

// DELETE .../approvals/{tool}: the person's "always" for a tool ends (a revoke turn).
// 204 when there was one; 404 when the session had no standing permission for it.
Task<void> Api::Impl::RevokeApproval(Exchange x) {
  auto in = std::make_unique<TurnInput>();
  in->speaker = x.grant != nullptr && !x.grant->speakers.empty() ? x.grant->speakers.front() : "api";
  in->revoke = std::string(x.item);
  Task<std::optional<TurnResultBox>> turn = ControlTurn(x, std::move(in));
  const std::optional<TurnResultBox> outcome = co_await std::move(turn);
  if (!outcome) co_return;
  const TurnResult& r = **outcome->result;
  const bool found = std::any_of(r.events.begin(), r.events.end(), [](const TraceEvent& e) {
    return e.type == EventType::kApprovalRevoked && e.data.value("found", false);
  });
  if (!found) co_return co_await SendError(x.res, Err(404, "not_found", r.reply));
  co_await x.res.Respond(204, std::string(), std::string());
}

}  // namespace reins
