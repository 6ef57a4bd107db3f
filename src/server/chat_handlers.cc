// POST /v1/chat/completions, GET /v1/models and GET /v1/models/{id}: the
// OpenAI-compatible door (docs/openai-endpoint.md). A request is read (chat_wire.h), its
// session found (the X-Reins-Session header, else the digest of the history a stateless
// client resends, else a new session), and its last message runs as one governed turn
// of that session, answered as a completion or as a stream of chunks. Once answered,
// the conversation including the answer is linked to the session, so that the next
// request, carrying it as history, finds the session again on any replica.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/this_coro.hpp>

#include "domain/json_parse.h"
#include "server/api_impl.h"
#include "server/keys.h"
#include "server/stored_turn_json.h"

namespace reins {
namespace {

// OpenAI's streams carry data lines only: no event names.
const std::string kNoEvent;

Headers SessionHeader(const std::string& id) { return {{"X-Reins-Session", id}}; }

// The official SDKs retry 409 (and 5xx) unless told not to.
Headers NoRetry(Headers h) {
  h["x-should-retry"] = "false";
  return h;
}

std::vector<ChatMessage> With(std::vector<ChatMessage> messages, ChatMessage more) {
  messages.push_back(std::move(more));
  return messages;
}

Json ModelJson(const std::string& name) {
  return {{"id", name}, {"object", "model"}, {"created", 0}, {"owned_by", "reins"}};
}

}  // namespace

// Writes a streamed turn's reply deltas as chat.completion.chunk events, and keeps what
// it sent: EventStream pumps the turn's events through it, and everything but the
// reply (tools, the trace's other events) stays out of the client's message.
class Api::Impl::ChunkWriter final : public ServerResponse {
 public:
  ChunkWriter(ServerResponse& inner, CompletionHead head, bool include_usage)
      : inner_(inner), head_(std::move(head)), include_usage_(include_usage) {}

  Task<Status> Send(std::string_view event, std::string_view data) override {
    if (event == "turn.started") {  // every chunk carries the completion's id: the turn's
      Result<Json> started = ParseJson(data);
      if (started.ok()) head_.id = "chatcmpl-" + started->value("turn_id", "");
    }
    if (event != "reply.delta") co_return OkStatus();
    Result<Json> delta = ParseJson(data);
    std::string text;
    if (delta.ok()) text = delta->value("text", "");
    co_return co_await Delta(std::move(text));
  }
  // Text the turn added once the stream ended (a clarification's options, a failure note).
  Task<Status> Delta(std::string text) {
    if (text.empty() && started_) co_return OkStatus();
    Json delta = {{"content", text}};
    if (!started_) delta["role"] = "assistant";
    started_ = true;
    sent_ += text;
    const std::string chunk = Dump(ChunkJson(head_, std::move(delta), nullptr, include_usage_));
    co_return co_await inner_.Send(kNoEvent, chunk);
  }
  Task<Status> Heartbeat() override { co_return co_await inner_.Heartbeat(); }
  const std::string& sent() const { return sent_; }
  CompletionHead& head() { return head_; }

  Task<void> Respond(int status, std::string type, std::string body, std::map<std::string, std::string> h) override {
    co_await inner_.Respond(status, std::move(type), std::move(body), std::move(h));
  }
  Task<Status> StartBody(std::string type) override { co_return co_await inner_.StartBody(std::move(type)); }
  Task<Status> SendChunk(std::string bytes) override { co_return co_await inner_.SendChunk(std::move(bytes)); }
  Task<Status> EndBody() override { co_return co_await inner_.EndBody(); }
  Task<Status> StartStream(Headers h) override { co_return co_await inner_.StartStream(std::move(h)); }
  int status() const override { return inner_.status(); }

 private:
  ServerResponse& inner_;
  CompletionHead head_;
  bool include_usage_;
  bool started_ = false;
  std::string sent_;
};


// What the client finally has of a turn: its result (TurnResultToJson's shape) and the
// events that counted its model calls, from the turn just run or the stored one.
struct Api::Impl::ChatOutcome {
  Json result;
  std::vector<TraceEvent> events;
};

struct Api::Impl::ChatTurn {
  std::string session_id;
  bool continued = false;  // a session that existed: what it has pending matters
  std::string key;         // the turn's idempotency key ("" when none)
  bool derived_key = false;  // the key is the conversation's digest, not the client's
  int reruns = 0;
  TurnInput input;

  // A person who sends a message again after it failed (the model was down) asks for
  // another try, not for the stored failure: the next try runs under the next key of
  // the digest's chain, so a resend after it succeeded still finds and replays it. A
  // client's own key names one try: it is not rerun. The rerun is the same request: a
  // write its failed try ran is replayed, not run again (WriteLedger::RequestKey).
  bool RerunAfterFailure(const ChatOutcome& stored) {
    if (!derived_key || reruns >= kMaxReruns || stored.result.value("status", "") != "failed") return false;
    input.idempotency_key = key + "-rerun-" + std::to_string(++reruns);
    return true;
  }
  static constexpr int kMaxReruns = 5;
};

Task<void> Api::Impl::ListModels(Exchange x) {
  Json body = {{"object", "list"}, {"data", Json::array({ModelJson(runtime.config()->name)})}};
  co_await SendJson(x.res, 200, std::move(body));
}

Task<void> Api::Impl::GetModel(Exchange x) {
  const std::string name = runtime.config()->name;
  if (x.session_id != name) {
    ApiError e = Err(404, "model_not_found", "no model '" + x.session_id + "': this server serves the agent '" + name + "'");
    co_return co_await SendChatError(x.res, e);
  }
  co_await SendJson(x.res, 200, ModelJson(name));
}

// A chat completion's request, read and given its session: what answering it needs.
struct Api::Impl::ChatCall {
  ChatRequest chat;
  ChatTurn turn;
  std::shared_ptr<void> slot;  // the turn's place among those in flight
};

// This frame waits with the turn: the request is read and its session found in
// PrepareChat's (the request's fields, the errors, the session's summary: 2.8 KB when
// they were all here), and what it needs comes back on the heap.
Task<void> Api::Impl::ChatCompletions(Exchange x) {
  std::unique_ptr<ChatCall> call = co_await PrepareChat(x);
  if (!call) co_return;  // refused, and answered
  if (call->chat.stream) {
    co_return co_await StreamChat(x.res, call->chat, call->turn, x.tenant, std::move(call->slot));
  }
  // Held, as POST .../turns holds its: the request's path waits with the turn no longer.
  if (std::shared_ptr<ServerResponse> held = x.res.Hold(Recorder(x))) {
    const auto here = co_await boost::asio::this_coro::executor;
    Task<void> answer = AnswerHeldChat(std::move(held), std::move(call), x.tenant);
    boost::asio::co_spawn(here, std::move(answer), boost::asio::detached);
    co_return;
  }
  co_await AnswerChat(x.res, call->chat, call->turn, x.tenant);
}

Task<void> Api::Impl::AnswerHeldChat(std::shared_ptr<ServerResponse> held, std::unique_ptr<ChatCall> call,
                                     std::string tenant) {
  co_await AnswerChat(*held, call->chat, call->turn, tenant);
}

Task<std::unique_ptr<Api::Impl::ChatCall>> Api::Impl::PrepareChat(Exchange x) {
  auto call = std::make_unique<ChatCall>();
  ChatRequest& chat = call->chat;
  ChatTurn& turn = call->turn;
  if (auto bad = ParseChatRequest(x.req.body, &chat)) {
    co_await SendChatError(x.res, *bad);
    co_return nullptr;
  }
  const std::string agent = runtime.config()->name;
  if (chat.model != agent) {
    ApiError e = Err(404, "model_not_found", "the model '" + chat.model + "' does not exist here: this server serves the agent '" + agent + "' (GET /v1/models)");
    co_await SendChatError(x.res, e);
    co_return nullptr;
  }
  std::optional<std::shared_ptr<void>> slot = TakeTurnSlot();
  if (!slot) {
    co_await SendChatError(x.res, Overloaded(), RetryAfter(1));
    co_return nullptr;
  }
  call->slot = std::move(*slot);
  if (auto refused = co_await FindChatSession(x.req, chat, x.tenant, &turn)) {
    co_await SendChatError(x.res, *refused);
    co_return nullptr;
  }
  // With a clarification or an approval pending, the message may answer it.
  Json clarification, approval;
  if (turn.continued && !chat.select && !chat.approve) {
    const SessionView& view = sessions;
    const std::string id = turn.session_id;
    std::function<Result<SessionSummary>()> read = [&view, id] { return view.Describe(id); };
    Result<SessionSummary> summary = co_await OnStore<Result<SessionSummary>>(std::move(read));
    if (!summary.ok()) {
      co_await SendChatError(x.res, FromStatus(summary.status()), SessionHeader(id));
      co_return nullptr;
    }
    clarification = summary->pending_clarification;
    approval = summary->pending_approval;
  }
  ChatAnswer answer = ReadChatAnswer(chat, clarification, approval, turn.key);
  if (auto refused = ActAs(x.grant, answer.turn)) {
    co_await SendChatError(x.res, *refused, SessionHeader(turn.session_id));
    co_return nullptr;
  }
  // Nothing is guessed: the question again, with what is pending, and no turn. Unless
  // this is a resend of the request that asked it: the turn runs, is refused as a
  // resend, and its stored answer is replayed.
  if (!answer.ask_again.empty() && !co_await KeyUsed(turn.session_id, answer.turn.idempotency_key)) {
    co_await AskAgain(x.res, chat, turn.session_id, x.tenant, std::move(answer.ask_again), clarification, approval);
    co_return nullptr;
  }
  turn.input = std::move(answer.turn);
  turn.input.traceparent = TraceparentOf(x.req);
  co_return std::move(call);
}

// Whether a turn of the session already used `key`.
Task<bool> Api::Impl::KeyUsed(const std::string& id, const std::string& key) {
  if (key.empty()) co_return false;
  const SessionView& view = sessions;
  std::function<bool()> read = [&view, id, key] {
    Result<std::optional<StoredTrace>> found = view.TurnByKey(id, key);
    return found.ok() && found->has_value();
  };
  co_return co_await OnStore<bool>(std::move(read));
}

// An answer that fit several options of the pending clarification, or none (or neither
// yes nor no to a pending approval): the client gets the question again as the
// assistant's message, in the shape a turn's would have, and the conversation's history
// with it leads to the same session.
Task<void> Api::Impl::AskAgain(ServerResponse& res, const ChatRequest& chat, const std::string& id,
                               const std::string& tenant, std::string text, const Json& clarification,
                               const Json& approval) {
  ChatOutcome outcome;
  Json& result = outcome.result;
  result = {{"turn_id", "ask_" + std::to_string(NowMs())}, {"reply", std::move(text)}};
  if (clarification.is_object()) {
    Json c = clarification.value("clarification", Json::object());
    c["id"] = clarification.value("id", "");
    result["clarification"] = std::move(c);
    result["status"] = "awaiting_clarification";
  } else {
    result["approval"] = approval;
    result["status"] = "awaiting_approval";
  }
  if (!chat.stream) co_return co_await SendChatOutcome(res, chat, id, tenant, std::move(outcome), SessionHeader(id));
  if (!(co_await res.StartStream(SessionHeader(id))).ok()) co_return;
  ChunkWriter writer(res, CompletionHead{"chatcmpl-", runtime.config()->name, NowMs() / 1000}, chat.include_usage);
  co_await EndChatStream(res, chat, tenant, id, writer, Result<TurnResult>(FailedPrecondition("asked again")),
                         std::move(outcome));
}

// The session a request continues, or a new one; 404 or 409 when it names none of the
// caller's. Two anonymous clients whose first exchanges match share a digest: a request
// that continues it is ambiguous and refused, never given the other's session.
Task<std::optional<ApiError>> Api::Impl::FindChatSession(const ServerRequest& req, const ChatRequest& chat,
                                                         std::string tenant, ChatTurn* turn) {
  const std::string header = req.Header("x-reins-session");
  const std::string client_key = req.Header("idempotency-key");
  if (!client_key.empty()) {
    TurnInput probe;
    probe.say = "-";
    probe.idempotency_key = client_key;
    if (Status ok = CheckTurnInput(probe); !ok.ok()) co_return Err(400, "bad_request", "Idempotency-Key: " + ok.message());
    if (std::string reserved = ReservedKeyRefusal(client_key); !reserved.empty()) co_return Err(400, "bad_request", reserved);
  }
  turn->key = client_key;
  if (turn->key.empty() && !chat.history.empty()) {
    // A resend of the same history and message (an SDK's retry after a timeout) is the
    // same turn: its key is the conversation's digest, last message included.
    turn->key = std::string(kDerivedKeyPrefix) + ConversationDigest(chat.user, With(chat.history, chat.last));
    turn->derived_key = true;
  }
  Store& store = runtime.store();
  if (!header.empty()) {
    if (!IsSessionId(header)) co_return Err(404, "not_found", "no session " + header);
    if (auto missing = co_await CheckSession(header, tenant)) co_return missing;
    turn->session_id = header;
    turn->continued = true;
    co_return std::nullopt;
  }
  std::string digest;
  if (!chat.history.empty()) {
    digest = ConversationDigest(chat.user, chat.history);
  } else if (!client_key.empty()) {
    // A first message sent again under the same Idempotency-Key: the session it began.
    digest = "key-" + Sha256Hex(chat.user + "\n" + client_key);
  }
  if (!digest.empty()) {
    std::function<Result<std::vector<std::string>>()> find = [&store, tenant, digest] {
      return store.FindConversation(tenant, digest, 2);
    };
    Result<std::vector<std::string>> found = co_await OnStore<Result<std::vector<std::string>>>(std::move(find));
    if (!found.ok()) co_return FromStatus(found.status());
    if (found->size() == 1) {
      turn->session_id = found->front();
      turn->continued = true;
      co_return std::nullopt;
    }
    if (found->size() > 1) {
      co_return Err(409, "conversation_ambiguous",
                    "more than one session continues this conversation (they began alike): send the X-Reins-Session "
                    "header that the first response returned");
    }
    if (!chat.history.empty()) {
      co_return Err(409, "conversation_unknown",
                    "no session of yours continues this conversation's history: send the X-Reins-Session header that "
                    "the first response returned, or start over with only the new message");
    }
  }
  Json metadata = {{"openai", {{"user", chat.user}}}};
  Result<std::string> id = co_await NewSession(std::move(metadata), tenant);
  if (!id.ok()) co_return SessionRefusal(id.status());
  turn->session_id = *id;
  if (!digest.empty()) {
    if (Status linked = co_await LinkConversation(tenant, digest, *id); !linked.ok()) co_return FromStatus(linked);
  }
  co_return std::nullopt;
}

Task<Status> Api::Impl::LinkConversation(std::string tenant, std::string digest, std::string session_id) {
  Store& store = runtime.store();
  const int64_t now = NowMs();
  std::function<Status()> link = [&store, tenant, digest, session_id, now] {
    return store.LinkConversation(tenant, digest, session_id, now);
  };
  co_return co_await OnStore<Status>(std::move(link));
}

// A finished (or replayed) turn's outcome for the client, or the refusal to send. This
// frame waits with the turn: the answer is built and sent in SendChatOutcome's.
Task<void> Api::Impl::AnswerChat(ServerResponse& res, const ChatRequest& chat, ChatTurn& turn,
                                 const std::string& tenant) {
  const std::string id = turn.session_id;
  ChatOutcome outcome;
  Headers headers = SessionHeader(id);
  for (;;) {
    Task<TurnResultBox> running = runtime.RunTurnOnHeap(id, std::make_unique<TurnInput>(turn.input));
    TurnResultBox ran = co_await std::move(running);
    Result<TurnResult>& r = *ran.result;
    if (r.ok()) {
      LogTurn(id, *r, NowMs());
      outcome = ChatOutcome{TurnResultToJson(*r, false), std::move(r->events)};
      break;
    }
    std::optional<ChatOutcome> first = co_await ReplayChat(turn, r.status());
    if (!first) co_return co_await SendChatError(res, FromStatus(r.status()), headers);
    if (turn.RerunAfterFailure(*first)) continue;
    outcome = std::move(*first);
    headers.merge(ReplayHeader());
    break;
  }
  co_await SendChatOutcome(res, chat, id, tenant, std::move(outcome), std::move(headers));
}

Task<void> Api::Impl::SendChatOutcome(ServerResponse& res, const ChatRequest& chat, const std::string& id,
                                      std::string tenant, ChatOutcome outcome, Headers headers) {
  if (outcome.result.value("status", "") == "failed") {
    ApiError e = Err(502, "turn_failed", outcome.result.value("error", "the turn failed"));
    co_return co_await SendChatError(res, e, NoRetry(SessionHeader(id)));
  }
  const std::string content = AssistantText(outcome.result);
  // Linked before the answer leaves: the client's next request may reach another replica.
  const std::string digest = ConversationDigest(chat.user, With(With(chat.history, chat.last), {"assistant", content}));
  if (Status linked = co_await LinkConversation(tenant, digest, id); !linked.ok()) {
    Log({{"msg", "conversation not linked"}, {"session_id", id}, {"error", linked.message()}}, NowMs());
  }
  CompletionHead head{"chatcmpl-" + outcome.result.value("turn_id", ""), runtime.config()->name, NowMs() / 1000};
  Json body = CompletionJson(head, content, UsageOf(outcome.events), ReinsExtension(id, outcome.result));
  co_await SendJson(res, 200, std::move(body), std::move(headers));
}

// The stored outcome of the turn that already used this request's key, when the runtime
// refused the request as a resend. A derived key is the digest of the very messages, so
// the same key is the same request even where the message now reads differently (the
// option it selected has been answered since, so it would now be said).
Task<std::optional<Api::Impl::ChatOutcome>> Api::Impl::ReplayChat(const ChatTurn& turn, Status refused) {
  const bool resend = refused.code() == StatusCode::kAlreadyExists ||
                      (turn.derived_key && refused.code() == StatusCode::kInvalidArgument);
  if (turn.input.idempotency_key.empty() || !resend) co_return std::nullopt;
  const SessionView& view = sessions;
  const std::string id = turn.session_id, key = turn.input.idempotency_key;
  std::function<std::optional<ChatOutcome>()> read = [&view, id, key]() -> std::optional<ChatOutcome> {
    Result<std::optional<StoredTrace>> found = view.TurnByKey(id, key);
    if (!found.ok() || !*found) return std::nullopt;
    const StoredTurn& first = (*found)->turns.front();
    return ChatOutcome{StoredTurnJson(first, (*found)->invocations), first.events};
  };
  co_return co_await OnStore<std::optional<ChatOutcome>>(std::move(read));
}

// The turn as chat.completion.chunk events: the governed deltas as the rails pass them,
// then what the turn added at its end, the finish, the usage when asked, [DONE]. A
// request refused before the turn starts gets its status, never a stream.
Task<void> Api::Impl::StreamChat(ServerResponse& res, const ChatRequest& chat, ChatTurn& turn, const std::string& tenant,
                                 std::shared_ptr<void> slot) {
  const std::string id = turn.session_id;
  const auto here = co_await boost::asio::this_coro::executor;
  auto stream = std::make_shared<EventStream>(here);
  const SharedTurnResult result = SpawnStreamedTurn(here, id, turn.input, stream, slot);  // `turn` may run again below
  const bool started = co_await stream->Started();
  std::optional<ChatOutcome> replayed;
  if (!started && !(**result).ok()) {
    replayed = co_await ReplayChat(turn, (**result).status());
    if (!replayed) co_return co_await SendChatError(res, FromStatus((**result).status()), SessionHeader(id));
    if (turn.RerunAfterFailure(*replayed)) {
      co_return co_await StreamChat(res, chat, turn, tenant, std::move(slot));
    }
  }
  if (!(co_await res.StartStream(SessionHeader(id))).ok()) co_return;
  ChunkWriter writer(res, CompletionHead{"chatcmpl-", runtime.config()->name, NowMs() / 1000}, chat.include_usage);
  if (started && !co_await stream->Pump(writer, options.heartbeat_ms)) co_return;  // the client went away
  co_await EndChatStream(res, chat, tenant, id, writer, **result, std::move(replayed));
}

// The rest of a streamed completion once its turn ended, in a frame of its own: the
// stream's waits above hold none of what it builds.
Task<void> Api::Impl::EndChatStream(ServerResponse& res, const ChatRequest& chat, const std::string& tenant,
                                    const std::string& id, ChunkWriter& writer, const Result<TurnResult>& ran,
                                    std::optional<ChatOutcome> replayed) {
  ChatOutcome outcome;
  if (replayed) {
    outcome = std::move(*replayed);
    writer.head().id = "chatcmpl-" + outcome.result.value("turn_id", "");
  } else if (ran.ok()) {
    outcome = ChatOutcome{TurnResultToJson(*ran, false), ran->events};
  } else {
    const std::string error = Dump(OpenAiErrorJson(FromStatus(ran.status())));
    (void)co_await res.Send(kNoEvent, error);
    co_return;
  }
  if (outcome.result.value("status", "") == "failed") {
    const std::string error = Dump(OpenAiErrorJson(Err(502, "turn_failed", outcome.result.value("error", "the turn failed"))));
    (void)co_await res.Send(kNoEvent, error);
    co_return;
  }
  // The rest of the message: what the deltas did not carry (all of a replayed reply, a
  // clarification's options, a failure note). The stream is the truth of what the client
  // holds, and that is what the next request's history will carry.
  const std::string content = AssistantText(outcome.result);
  if (content.compare(0, writer.sent().size(), writer.sent()) == 0) {
    std::string rest = content.substr(writer.sent().size());
    if (!(co_await writer.Delta(std::move(rest))).ok()) co_return;
  }
  const std::vector<ChatMessage> said = With(With(chat.history, chat.last), {"assistant", writer.sent()});
  std::string digest = ConversationDigest(chat.user, said);
  if (Status linked = co_await LinkConversation(tenant, std::move(digest), id); !linked.ok()) {
    Log({{"msg", "conversation not linked"}, {"session_id", id}, {"error", linked.message()}}, NowMs());
  }
  const CompletionHead& head = writer.head();
  Json finish = ChunkJson(head, Json::object(), "stop", chat.include_usage, ReinsExtension(id, outcome.result));
  const std::string last = Dump(finish);
  if (!(co_await res.Send(kNoEvent, last)).ok()) co_return;
  if (chat.include_usage) {
    const std::string usage = Dump(UsageChunkJson(head, UsageOf(outcome.events)));
    if (!(co_await res.Send(kNoEvent, usage)).ok()) co_return;
  }
  const std::string done = "[DONE]";
  (void)co_await res.Send(kNoEvent, done);
}

}  // namespace reins
