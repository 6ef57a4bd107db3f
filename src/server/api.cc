#include "server/api.h"

#include <chrono>
#include <iostream>
#include <optional>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "domain/detail_log.h"
#include "reins/json.h"
#include "server/event_stream.h"
#include "server/request_bodies.h"
#include "server/routes.h"

namespace reins {
namespace {

namespace asio = boost::asio;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// (A plain function: GCC 12 miscompiles brace-initialised temporaries in coroutines.)
ApiError Err(int status, const char* code, std::string message) { return ApiError{status, code, std::move(message)}; }

// GCC 12 cannot compile a string literal inside a full-expression that also holds a
// co_await ("array used as initializer"), so the coroutines below take their literal
// values from these.
constexpr const char* kJsonType = "application/json";
constexpr const char* kPrometheusType = "text/plain; version=0.0.4; charset=utf-8";
constexpr int kTracePageTurns = 100;  // turns read per store call when streaming a whole trace
Json HealthJson() { return {{"status", "ok"}}; }
Json ReadyJson(const std::string& agent) { return {{"status", "ready"}, {"agent", agent}}; }

std::optional<ApiError> NotReady(bool shutting_down, const Status& store) {
  if (shutting_down) return Err(503, "shutting_down", "the server is shutting down");
  if (!store.ok()) return Err(503, "store_unavailable", "the store cannot be read");
  return std::nullopt;
}

// Maps a runtime refusal to the API's statuses. Refusals explain themselves; a failure
// of reins' own parts (the store, say) may name files and internals, so the client
// gets a plain sentence and the detail goes to the log.
ApiError FromStatus(const Status& s) {
  switch (s.code()) {
    case StatusCode::kNotFound: return {404, "not_found", s.message()};
    case StatusCode::kFailedPrecondition: return {409, "conflict", s.message()};
    case StatusCode::kInvalidArgument: return {422, "invalid", s.message()};
    case StatusCode::kUnavailable:
      LogDetail("api", s.message());
      return {503, "unavailable", "a part of the server is unavailable; retry shortly"};
    default:
      LogDetail("api", s.ToString());
      return {500, "internal", "the server could not complete the request (the server log has the detail)"};
  }
}

std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

// A stored turn in the TurnResult shape (idempotent replays, the trace).
Json StoredTurnJson(const StoredTurn& t, const std::vector<StoredInvocation>& invocations) {
  Json j = t.result.is_object() ? t.result : Json::object();
  Json tools = Json::array();
  for (const StoredInvocation& inv : invocations) {
    if (inv.turn_id != t.turn_id) continue;
    Json jt = {{"name", inv.name}, {"args", inv.args}, {"status", inv.status}};
    if (!inv.reason.empty()) jt["reason"] = inv.reason;
    if (inv.success) {
      jt["success"] = *inv.success;
      jt["next_action"] = inv.next_action;
      jt["latency_ms"] = inv.latency_ms;
    }
    tools.push_back(std::move(jt));
  }
  j["tools"] = std::move(tools);
  return j;
}

// One turn of GET .../trace: the TurnResult plus what was asked and every event.
Json TraceTurnJson(const StoredTurn& t, const std::vector<StoredInvocation>& invocations) {
  Json j = StoredTurnJson(t, invocations);
  j["turn_number"] = t.turn_number;
  j["speaker"] = t.speaker;
  j["input"] = t.input;
  j["created_at"] = FormatIsoTime(t.created_at_ms);
  Json events = Json::array();
  for (const TraceEvent& e : t.events) events.push_back(TraceEventToJson(e));
  j["events"] = std::move(events);
  return j;
}

// A page of the trace: the turns' JSON texts, or why they could not be read.
struct TracePage {
  std::vector<std::string> turns;
  int last_number = 0;
};

Result<TracePage> ReadTracePage(Store& store, const std::string& id, TurnRange range) {
  REINS_ASSIGN_OR_RETURN(std::vector<StoredTurn> turns, store.LoadTurns(id, range));
  REINS_ASSIGN_OR_RETURN(std::vector<StoredInvocation> calls, store.LoadInvocations(id, range));
  TracePage page;
  for (const StoredTurn& t : turns) {
    page.turns.push_back(Dump(TraceTurnJson(t, calls)));
    page.last_number = t.turn_number;
  }
  return page;
}

Task<void> RunStreamedTurn(Runtime& rt, std::string id, TurnInput in, std::shared_ptr<std::optional<Result<TurnResult>>> out) {
  *out = co_await rt.RunTurn(id, std::move(in));
}

void Log(Json line) {
  line["ts"] = FormatIsoTime(NowMs());
  if (!line.contains("level")) line["level"] = "info";
  std::string text = Dump(line) + "\n";
  std::cerr << text << std::flush;
}

// --max-inflight turns are running already.
ApiError Overloaded() { return Err(503, "overloaded", "too many turns in flight; retry after the Retry-After delay"); }

ApiError WrongMethod(const std::string& used, const char* allowed) {
  return Err(405, "method_not_allowed", used + " is not allowed here (use " + allowed + ")");
}
std::map<std::string, std::string> AllowHeader(const char* method) { return {{"Allow", method}}; }
std::map<std::string, std::string> ReplayHeader() { return {{"Idempotent-Replay", "true"}}; }
std::map<std::string, std::string> RetryAfter(int seconds) { return {{"Retry-After", std::to_string(seconds)}}; }

Json CreatedJson(const std::string& id, const std::string& greeting) {
  Json body = {{"session_id", id}};
  if (!greeting.empty()) body["greeting"] = greeting;
  return body;
}

Result<Json> SessionJson(Store& store, const std::string& id) {
  Result<SessionRecord> s = store.LoadSession(id);
  if (!s.ok()) return s.status();
  Json j = {{"session_id", s->id}, {"created_at", FormatIsoTime(s->created_at_ms)}, {"turns", s->turn_count}};
  if (!s->metadata.empty()) j["metadata"] = s->metadata;
  if (Result<Lease> lease = store.LoadLease(id); lease.ok() && lease->ActiveAt(NowMs())) {
    j["lease"] = {{"owner", lease->owner}, {"domain", lease->domain}, {"expires_at", FormatIsoTime(lease->expires_at_ms)}};
  }
  for (const char* pending : {"pending_clarification", "pending_approval"}) {
    if (s->state.contains(pending) && !s->state[pending].is_null()) j[pending] = s->state[pending];
  }
  return j;
}

void LogTurn(const std::string& session_id, const TurnResult& r) {
  Log({{"msg", "turn"}, {"session_id", session_id}, {"turn_id", r.turn_id}, {"status", TurnStatusName(r.status)},
       {"model_calls", r.model_calls}, {"tools", r.tools.size()}});
}

}  // namespace

struct Api::Impl : std::enable_shared_from_this<Api::Impl> {
  Runtime& runtime;
  asio::any_io_executor strand;
  std::shared_ptr<const KeyStore> keys;
  Metrics& metrics;
  ApiOptions options;
  RateLimiter limiter;
  std::atomic<bool> shutting_down{false};
  std::atomic<int> inflight{0};  // turns running now (--max-inflight)
  // Whole traces are read and rendered here, never on the runtime strand.
  asio::thread_pool readers{1};

  std::mutex mu;  // guards subscribers and model_call_started
  std::map<std::string, std::vector<std::weak_ptr<EventStream>>> subscribers;
  std::map<std::string, std::pair<int64_t, std::string>> model_call_started;  // session -> (at_ms, purpose)

  Impl(Runtime& r, asio::any_io_executor s, std::shared_ptr<const KeyStore> k, Metrics& m, ApiOptions o)
      : runtime(r), strand(std::move(s)), keys(std::move(k)), metrics(m), options(std::move(o)),
        limiter(options.rate_per_second, options.rate_burst) {}
  ~Impl() { readers.join(); }

  // Runs `work` on `executor` and returns its value on the caller's executor.
  // (Through std::optional: Asio needs a default-constructible result, Result<T> is not.)
  template <typename T>
  Task<T> On(asio::any_io_executor executor, std::function<Task<T>()> work) {
    // Named, not a temporary in the co_await expression: GCC 12 destroys such
    // temporaries wrongly in coroutines.
    std::function<Task<std::optional<T>>()> wrapped = [work = std::move(work)]() -> Task<std::optional<T>> {
      co_return co_await work();
    };
    std::optional<T> out = co_await asio::co_spawn(executor, std::move(wrapped), asio::use_awaitable);
    co_return std::move(*out);
  }
  template <typename T>
  Task<T> OnRuntime(std::function<Task<T>()> work) {
    co_return co_await On<T>(strand, std::move(work));
  }

  std::optional<ApiError> Admit(const ServerRequest& req, const Route& route, std::string* tenant,
                                std::map<std::string, std::string>* extra);
  void Record(const ServerRequest& req, const std::string& route, int status, const std::string& tenant,
              std::chrono::steady_clock::duration took);
  Task<void> Dispatch(const ServerRequest& req, ServerResponse& res, const Route& route, const std::string& tenant);
  Task<void> CreateSession(const ServerRequest& req, ServerResponse& res, const std::string& tenant);
  Task<std::optional<ApiError>> CheckSession(const std::string& id, const std::string& tenant);
  Task<void> GetSession(ServerResponse& res, const std::string& id);
  Task<void> PostTurn(const ServerRequest& req, ServerResponse& res, const std::string& id);
  Task<void> StreamTurn(ServerResponse& res, const std::string& id, TurnInput in, std::shared_ptr<void> slot);
  Task<void> GetTrace(const ServerRequest& req, ServerResponse& res, const std::string& id);
  Task<void> StreamTrace(ServerResponse& res, const std::string& id);
  Task<void> CancelLease(ServerResponse& res, const std::string& id);
  Task<void> StreamEvents(ServerResponse& res, const std::string& id);
  Task<void> RenderMetrics(ServerResponse& res);
  Task<void> Ready(ServerResponse& res);
  Task<std::optional<Json>> Replay(const std::string& id, const std::string& key);
  // A place among the turns in flight, held until the turn ends; nullopt when full.
  std::optional<std::shared_ptr<void>> TakeTurnSlot();
  Task<Result<TracePage>> ReadPage(const std::string& id, TurnRange range);
  void Count(const std::string& session_id, const TraceEvent& e);
};

namespace {

// Arguments by value: a temporary bound to a reference across a co_await is what
// GCC 12 gets wrong.
Task<void> SendJson(ServerResponse& res, int status, Json body, std::map<std::string, std::string> headers = {}) {
  std::string type = kJsonType;
  std::string text = Dump(body);
  co_await res.Respond(status, std::move(type), std::move(text), std::move(headers));
}

Task<void> SendError(ServerResponse& res, ApiError e, std::map<std::string, std::string> headers = {}) {
  co_await SendJson(res, e.status, ErrorJson(e), std::move(headers));
}

}  // namespace

Api::Api(Runtime& runtime, asio::any_io_executor runtime_strand, std::shared_ptr<const KeyStore> keys, Metrics& metrics,
         ApiOptions options)
    : impl_(std::make_shared<Impl>(runtime, std::move(runtime_strand), std::move(keys), metrics, std::move(options))) {}

Api::~Api() = default;

void Api::BeginShutdown() {
  impl_->shutting_down = true;
  std::lock_guard lock(impl_->mu);
  for (auto& [session, list] : impl_->subscribers) {
    for (auto& weak : list) {
      if (auto s = weak.lock()) s->Close();
    }
  }
}

Task<void> Api::Handle(const ServerRequest& req, ServerResponse& res) {
  auto impl = impl_;
  const auto start = std::chrono::steady_clock::now();
  const Route route = MatchRoute(req.path);
  std::string tenant;
  std::map<std::string, std::string> extra;
  std::optional<ApiError> refused = impl->Admit(req, route, &tenant, &extra);
  if (refused) {
    co_await SendError(res, *refused, extra);
  } else {
    co_await impl->Dispatch(req, res, route, tenant);
  }
  impl->Record(req, route.label, res.status(), tenant, std::chrono::steady_clock::now() - start);
}

// Shutdown, authentication and rate limiting, before anything else. Every path but the
// open probes needs a key, unknown paths included: what a keyless client learns is 401.
// (Plain functions from here on build what the coroutines send: GCC 12 mishandles
// initializer lists and literal temporaries in coroutine bodies.)
std::optional<ApiError> Api::Impl::Admit(const ServerRequest& req, const Route& route, std::string* tenant,
                                         std::map<std::string, std::string>* extra) {
  if (IsOpenEndpoint(route.endpoint)) return std::nullopt;
  if (shutting_down) return Err(503, "shutting_down", "the server is shutting down; retry against another instance");
  std::string bucket = "local";
  if (keys) {
    std::string auth = req.Header("authorization");
    std::string key = auth.rfind("Bearer ", 0) == 0 ? auth.substr(7) : "";
    *tenant = key.empty() ? "" : keys->Authenticate(key);
    if (key.empty()) return Err(401, "unauthorized", "send Authorization: Bearer <key> (create one with reins keys add TENANT)");
    if (tenant->empty()) return Err(401, "unauthorized", "the API key is not valid");
    bucket = Sha256Hex(key);
  }
  if (int64_t wait = limiter.Acquire(bucket, NowMs()); wait > 0) {
    (*extra)["Retry-After"] = std::to_string((wait + 999) / 1000);
    return Err(429, "rate_limited", "too many requests for this key; retry after the Retry-After delay");
  }
  return std::nullopt;
}

void Api::Impl::Record(const ServerRequest& req, const std::string& route, int status, const std::string& tenant,
                       std::chrono::steady_clock::duration took) {
  double seconds = std::chrono::duration<double>(took).count();
  metrics.Inc("reins_http_requests_total", {{"route", route}, {"status", std::to_string(status)}});
  metrics.Observe("reins_http_request_duration_seconds", {{"route", route}}, seconds);
  if (route == "/healthz" || route == "/metrics") return;
  Log({{"msg", "request"}, {"method", req.method}, {"path", req.path}, {"route", route}, {"status", status},
       {"ms", static_cast<int64_t>(seconds * 1000)}, {"tenant", tenant}, {"remote", req.remote}});
}

Task<void> Api::Impl::Dispatch(const ServerRequest& req, ServerResponse& res, const Route& route, const std::string& tenant) {
  if (route.endpoint == Endpoint::kNone) {
    ApiError e = Err(404, "not_found", "no such endpoint: " + req.path);
    co_return co_await SendError(res, e);
  }
  if (req.method != route.method) {
    co_return co_await SendError(res, WrongMethod(req.method, route.method), AllowHeader(route.method));
  }
  switch (route.endpoint) {
    case Endpoint::kHealth: co_return co_await SendJson(res, 200, HealthJson());
    case Endpoint::kReady: co_return co_await Ready(res);
    case Endpoint::kMetrics: co_return co_await RenderMetrics(res);
    case Endpoint::kCreateSession: co_return co_await CreateSession(req, res, tenant);
    default: break;
  }
  const std::string& id = route.session_id;
  if (auto missing = co_await CheckSession(id, tenant)) co_return co_await SendError(res, *missing);
  switch (route.endpoint) {
    case Endpoint::kSession: co_return co_await GetSession(res, id);
    case Endpoint::kTurns: co_return co_await PostTurn(req, res, id);
    case Endpoint::kTrace: co_return co_await GetTrace(req, res, id);
    case Endpoint::kLease: co_return co_await CancelLease(res, id);
    default: co_return co_await StreamEvents(res, id);
  }
}

Task<void> Api::Impl::CreateSession(const ServerRequest& req, ServerResponse& res, const std::string& tenant) {
  Json metadata;
  if (auto bad = ParseSessionBody(req.body, &metadata)) co_return co_await SendError(res, *bad);
  const std::optional<int64_t> quota = keys ? keys->MaxSessions(tenant) : std::nullopt;
  Runtime& rt = runtime;
  // Counted and created in one step on the runtime strand: two concurrent requests
  // cannot both take the last place.
  std::function<Task<Result<std::string>>()> work = [&rt, metadata, tenant, quota]() -> Task<Result<std::string>> {
    if (quota) {
      REINS_CO_ASSIGN_OR_RETURN(const int64_t count, rt.store().CountSessions(tenant));
      if (count >= *quota) {
        co_return ResourceExhausted("tenant '" + tenant + "' has " + std::to_string(count) +
                                    " sessions, its quota (max_sessions in the keys file)");
      }
    }
    co_return rt.CreateSession(metadata, tenant);
  };
  Result<std::string> id = co_await OnRuntime<Result<std::string>>(std::move(work));
  if (!id.ok() && id.status().code() == StatusCode::kResourceExhausted) {
    co_return co_await SendError(res, Err(429, "quota_exceeded", id.status().message()));
  }
  if (!id.ok()) co_return co_await SendError(res, FromStatus(id.status()));
  metrics.Inc("reins_sessions_created_total");
  co_await SendJson(res, 201, CreatedJson(*id, runtime.Greeting()));
}

// Another tenant's session is reported exactly like a missing one.
Task<std::optional<ApiError>> Api::Impl::CheckSession(const std::string& id, const std::string& tenant) {
  Runtime& rt = runtime;
  std::function<Task<Result<SessionRecord>>()> work = [&rt, id]() -> Task<Result<SessionRecord>> {
    co_return rt.store().LoadSession(id);
  };
  Result<SessionRecord> s = co_await OnRuntime<Result<SessionRecord>>(std::move(work));
  if (!s.ok() || s->tenant != tenant) co_return ApiError{404, "not_found", "no session " + id};
  co_return std::nullopt;
}

Task<void> Api::Impl::GetSession(ServerResponse& res, const std::string& id) {
  Runtime& rt = runtime;
  std::function<Task<Result<Json>>()> work = [&rt, id]() -> Task<Result<Json>> { co_return SessionJson(rt.store(), id); };
  Result<Json> body = co_await OnRuntime<Result<Json>>(std::move(work));
  if (!body.ok()) co_return co_await SendError(res, FromStatus(body.status()));
  co_await SendJson(res, 200, *body);
}

// The stored result of the turn that already used `key`, if any.
Task<std::optional<Json>> Api::Impl::Replay(const std::string& id, const std::string& key) {
  Runtime& rt = runtime;
  std::function<Task<std::optional<Json>>()> work = [&rt, id, key]() -> Task<std::optional<Json>> {
    Result<std::optional<StoredTurn>> turn = rt.store().FindTurnByKey(id, key);
    if (!turn.ok() || !*turn) co_return std::nullopt;
    const TurnRange only{(*turn)->turn_number - 1, 1};
    Result<std::vector<StoredInvocation>> calls = rt.store().LoadInvocations(id, only);
    co_return StoredTurnJson(**turn, calls.ok() ? *calls : std::vector<StoredInvocation>{});
  };
  co_return co_await OnRuntime<std::optional<Json>>(std::move(work));
}

std::optional<std::shared_ptr<void>> Api::Impl::TakeTurnSlot() {
  if (++inflight > options.max_inflight) {
    --inflight;
    return std::nullopt;
  }
  auto self = shared_from_this();
  return std::shared_ptr<void>(nullptr, [self](void*) { --self->inflight; });
}

Task<void> Api::Impl::PostTurn(const ServerRequest& req, ServerResponse& res, const std::string& id) {
  TurnInput in;
  if (auto bad = ParseTurnBody(req.body, req.Header("idempotency-key"), &in)) co_return co_await SendError(res, *bad);
  std::optional<std::shared_ptr<void>> slot = TakeTurnSlot();
  if (!slot) {
    co_return co_await SendError(res, Overloaded(), RetryAfter(1));
  }
  if (req.Header("accept").find("text/event-stream") != std::string::npos) {
    co_return co_await StreamTurn(res, id, std::move(in), std::move(*slot));
  }
  const std::string key = in.idempotency_key;
  Runtime& rt = runtime;
  std::function<Task<Result<TurnResult>>()> work = [&rt, id, in]() mutable -> Task<Result<TurnResult>> {
    co_return co_await rt.RunTurn(id, std::move(in));
  };
  Result<TurnResult> r = co_await OnRuntime<Result<TurnResult>>(std::move(work));
  if (!r.ok() && r.status().code() == StatusCode::kAlreadyExists && !key.empty()) {
    if (std::optional<Json> first = co_await Replay(id, key)) {
      co_return co_await SendJson(res, 200, *first, ReplayHeader());
    }
  }
  if (!r.ok()) co_return co_await SendError(res, FromStatus(r.status()));
  LogTurn(id, *r);
  co_await SendJson(res, 200, TurnResultToJson(*r, true));
}

Task<void> Api::Impl::StreamTurn(ServerResponse& res, const std::string& id, TurnInput in, std::shared_ptr<void> slot) {
  auto stream = std::make_shared<EventStream>(co_await asio::this_coro::executor);
  in.on_event = [stream](const TraceEvent& e) { stream->PushTurnEvent(e); };
  const std::string key = in.idempotency_key;
  auto result = std::make_shared<std::optional<Result<TurnResult>>>();
  // The turn runs on the runtime strand whatever happens to this connection: a client
  // that goes away mid-stream does not stop it (it is still stored, its writes still run).
  // The turn's log line is written when the turn ends, whether or not anyone still listens.
  asio::co_spawn(strand, RunStreamedTurn(runtime, id, std::move(in), result),
                 [id, stream, result, slot](std::exception_ptr e) {
                   if (e) *result = Result<TurnResult>(Internal("the turn failed unexpectedly"));
                   if (result->has_value() && (*result)->ok()) LogTurn(id, ***result);
                   stream->Finish();
                 });
  // The stream begins with the turn's first event: a turn the runtime refuses before it
  // starts gets its own status (409, 422...), never a 200 stream with an error in it.
  if (!co_await stream->Started()) {
    const Result<TurnResult>& refused = **result;
    if (refused.ok()) co_return co_await SendJson(res, 200, TurnResultToJson(*refused, true));
    if (refused.status().code() == StatusCode::kAlreadyExists && !key.empty()) {
      if (std::optional<Json> first = co_await Replay(id, key)) co_return co_await SendJson(res, 200, *first, ReplayHeader());
    }
    co_return co_await SendError(res, FromStatus(refused.status()));
  }
  if (!(co_await res.StartStream()).ok()) co_return;
  // Pump returns true only once the turn finished (and set its result); false when the
  // client went away, while the turn may still be running.
  if (!co_await stream->Pump(res, options.heartbeat_ms)) co_return;
  const Result<TurnResult>& r = **result;
  Json done = r.ok() ? TurnResultToJson(*r, true) : ErrorJson(FromStatus(r.status()));
  const std::string name = r.ok() ? "turn.completed" : "error";
  const std::string data = Dump(done);
  (void)co_await res.Send(name, data);
}

Task<Result<TracePage>> Api::Impl::ReadPage(const std::string& id, TurnRange range) {
  Runtime& rt = runtime;
  std::function<Task<Result<TracePage>>()> work = [&rt, id, range]() -> Task<Result<TracePage>> {
    co_return ReadTracePage(rt.store(), id, range);
  };
  co_return co_await On<Result<TracePage>>(readers.get_executor(), std::move(work));
}

Task<void> Api::Impl::GetTrace(const ServerRequest& req, ServerResponse& res, const std::string& id) {
  TraceQuery query;
  if (auto bad = ParseTraceQuery(req.query, &query)) co_return co_await SendError(res, *bad);
  if (!query.paged) co_return co_await StreamTrace(res, id);
  Result<TracePage> page = co_await ReadPage(id, TurnRange{query.after, query.limit});
  if (!page.ok()) co_return co_await SendError(res, FromStatus(page.status()));
  std::string body = "{\"session_id\":" + Dump(Json(id)) + ",\"turns\":[";
  for (size_t i = 0; i < page->turns.size(); ++i) body += (i > 0 ? "," : "") + page->turns[i];
  body += "]";
  if (static_cast<int>(page->turns.size()) == query.limit) body += ",\"next_after\":" + std::to_string(page->last_number);
  body += "}";
  std::string type = kJsonType;
  co_await res.Respond(200, std::move(type), std::move(body));
}

// Every turn, as the contract says, but written page by page as it is read: memory
// stays at one page whatever the session's length, and the store is free between pages.
Task<void> Api::Impl::StreamTrace(ServerResponse& res, const std::string& id) {
  Result<TracePage> page = co_await ReadPage(id, TurnRange{0, kTracePageTurns});
  if (!page.ok()) co_return co_await SendError(res, FromStatus(page.status()));
  std::string type = kJsonType;
  if (!(co_await res.StartBody(std::move(type))).ok()) co_return;
  std::string chunk = "{\"session_id\":" + Dump(Json(id)) + ",\"turns\":[";
  bool first = true;
  while (true) {
    for (std::string& turn : page->turns) {
      chunk += (first ? "" : ",") + std::move(turn);
      first = false;
    }
    if (!(co_await res.SendChunk(std::move(chunk))).ok()) co_return;
    chunk.clear();
    if (static_cast<int>(page->turns.size()) < kTracePageTurns) break;
    page = co_await ReadPage(id, TurnRange{page->last_number, kTracePageTurns});
    if (!page.ok()) {
      // The status line is gone: end the document so that it still parses, saying why.
      chunk = "],\"error\":" + Dump(ErrorJson(FromStatus(page.status()))["error"]) + "}";
      if ((co_await res.SendChunk(std::move(chunk))).ok()) (void)co_await res.EndBody();
      co_return;
    }
  }
  chunk = "]}";
  if ((co_await res.SendChunk(std::move(chunk))).ok()) (void)co_await res.EndBody();
}

Task<void> Api::Impl::CancelLease(ServerResponse& res, const std::string& id) {
  // A cancel is a turn too: it takes a place among the turns in flight.
  std::optional<std::shared_ptr<void>> slot = TakeTurnSlot();
  if (!slot) {
    co_return co_await SendError(res, Overloaded(), RetryAfter(1));
  }
  TurnInput in;
  in.speaker = "api";
  in.cancel = true;
  Runtime& rt = runtime;
  std::function<Task<Result<TurnResult>>()> work = [&rt, id, in]() mutable -> Task<Result<TurnResult>> {
    co_return co_await rt.RunTurn(id, std::move(in));
  };
  Result<TurnResult> r = co_await OnRuntime<Result<TurnResult>>(std::move(work));
  if (!r.ok()) co_return co_await SendError(res, FromStatus(r.status()));
  LogTurn(id, *r);
  co_await res.Respond(204, std::string(), std::string());
}

Task<void> Api::Impl::StreamEvents(ServerResponse& res, const std::string& id) {
  auto stream = std::make_shared<EventStream>(co_await asio::this_coro::executor);
  {
    std::lock_guard lock(mu);
    subscribers[id].push_back(stream);
  }
  if ((co_await res.StartStream()).ok()) (void)co_await stream->Pump(res, options.heartbeat_ms);
  std::lock_guard lock(mu);
  auto& list = subscribers[id];
  std::erase_if(list, [&](const std::weak_ptr<EventStream>& w) { return w.expired() || w.lock() == stream; });
  if (list.empty()) subscribers.erase(id);
}

Task<void> Api::Impl::Ready(ServerResponse& res) {
  Runtime& rt = runtime;
  std::function<Task<Result<std::vector<OutboxEntry>>>()> work =
      [&rt]() -> Task<Result<std::vector<OutboxEntry>>> { co_return rt.store().UnfinishedOutbox(); };
  Result<std::vector<OutboxEntry>> probe = co_await OnRuntime<Result<std::vector<OutboxEntry>>>(std::move(work));
  if (!probe.ok()) LogDetail("store", "readiness probe failed: " + probe.status().message());
  std::optional<ApiError> unready = NotReady(shutting_down, probe.ok() ? Status() : probe.status());
  if (unready) co_return co_await SendError(res, *unready);
  co_await SendJson(res, 200, ReadyJson(runtime.config()->name));
}

Task<void> Api::Impl::RenderMetrics(ServerResponse& res) {
  Runtime& rt = runtime;
  std::function<Task<Result<std::pair<int64_t, int64_t>>>()> work = [&rt]() -> Task<Result<std::pair<int64_t, int64_t>>> {
    REINS_CO_ASSIGN_OR_RETURN(const std::vector<OutboxEntry> outbox, rt.store().UnfinishedOutbox());
    REINS_CO_ASSIGN_OR_RETURN(const int64_t sessions, rt.store().CountSessions(std::nullopt));
    co_return std::make_pair(static_cast<int64_t>(outbox.size()), sessions);
  };
  Result<std::pair<int64_t, int64_t>> counts = co_await OnRuntime<Result<std::pair<int64_t, int64_t>>>(std::move(work));
  if (counts.ok()) {
    metrics.Set("reins_outbox_depth", {}, static_cast<double>(counts->first));
    metrics.Set("reins_sessions", {}, static_cast<double>(counts->second));
  }
  metrics.Set("reins_sessions_cached", {}, static_cast<double>(runtime.cached_sessions()));
  if (options.open_connections) metrics.Set("reins_connections_open", {}, options.open_connections());
  std::string type = kPrometheusType;
  co_await res.Respond(200, std::move(type), metrics.Render());
}

void Api::OnRuntimeEvent(const std::string& session_id, const TraceEvent& event) {
  impl_->Count(session_id, event);
  std::vector<std::shared_ptr<EventStream>> targets;
  {
    std::lock_guard lock(impl_->mu);
    auto it = impl_->subscribers.find(session_id);
    if (it == impl_->subscribers.end()) return;
    for (auto& weak : it->second) {
      if (auto s = weak.lock()) targets.push_back(std::move(s));
    }
  }
  for (auto& s : targets) s->PushSessionEvent(event);
}

// Metrics from the durable event stream of every session.
void Api::Impl::Count(const std::string& session_id, const TraceEvent& e) {
  const Json& d = e.data;
  auto str = [&](const char* key) { return d.is_object() && d.contains(key) && d[key].is_string() ? d[key].get<std::string>() : ""; };
  switch (e.type) {
    case EventType::kTurnCompleted:
      metrics.Inc("reins_turns_total", {{"status", str("status")}});
      break;
    case EventType::kModelCall: {
      metrics.Inc("reins_model_calls_total", {{"purpose", str("purpose")}, {"provider", str("model")}});
      std::lock_guard lock(mu);
      model_call_started[session_id] = {e.at_ms, str("purpose")};
      break;
    }
    case EventType::kModelResponse:
    case EventType::kModelError: {
      std::lock_guard lock(mu);
      if (auto it = model_call_started.find(session_id); it != model_call_started.end()) {
        metrics.Observe("reins_model_call_duration_seconds",
                        {{"purpose", it->second.second}, {"provider", runtime.config()->model.provider}},
                        static_cast<double>(e.at_ms - it->second.first) / 1000.0);
        model_call_started.erase(it);
      }
      break;
    }
    case EventType::kToolExecuted:
    case EventType::kDeferredExecuted: {
      bool ok = d.is_object() && d.value("success", false);
      metrics.Inc("reins_tool_calls_total", {{"tool", str("name")}, {"status", ok ? "success" : "failure"},
                                             {"deferred", e.type == EventType::kDeferredExecuted ? "true" : "false"}});
      break;
    }
    case EventType::kToolRejected:
    case EventType::kToolSkipped: {
      // A model may name any tool: only the agent's tools become label values, so the
      // number of series stays bounded.
      const std::string name = runtime.config()->FindTool(str("name")) != nullptr ? str("name") : "(unknown)";
      const std::string status = e.type == EventType::kToolRejected ? "rejected" : "skipped";
      metrics.Inc("reins_tool_calls_total", {{"tool", name}, {"status", status}, {"deferred", "false"}});
      break;
    }
    case EventType::kRailFired:
      metrics.Inc("reins_rails_fired_total", {{"rail", str("rail")}});
      break;
    case EventType::kTurnBlocked:
      metrics.Inc("reins_leases_blocked_total");
      break;
    case EventType::kAudit:
      metrics.Inc("reins_audit_repairs_total", {{"repair", str("repair")}});
      break;
    default:
      break;
  }
}

}  // namespace reins
