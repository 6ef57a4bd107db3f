#include "server/api.h"
#include "server/request_rules.h"

#include "server/api_impl.h"

namespace reins {
namespace {

using Handler = Task<void> (Api::Impl::*)(Exchange);

// The route table: which handler serves each endpoint, and whether it serves one
// session (checked to exist, and to be the caller's, before the handler runs).
struct HandlerEntry {
  Endpoint endpoint;
  Handler handler;
  bool per_session;
};
const HandlerEntry kHandlers[] = {
    {Endpoint::kHealth, &Api::Impl::Health, false},
    {Endpoint::kReady, &Api::Impl::Ready, false},
    {Endpoint::kMetrics, &Api::Impl::RenderMetrics, false},
    {Endpoint::kCreateSession, &Api::Impl::CreateSession, false},
    {Endpoint::kListSessions, &Api::Impl::ListSessions, false},
    {Endpoint::kSession, &Api::Impl::GetSession, true},
    {Endpoint::kTurns, &Api::Impl::PostTurn, true},
    {Endpoint::kTrace, &Api::Impl::GetTrace, true},
    {Endpoint::kTimeline, &Api::Impl::GetTimeline, true},
    {Endpoint::kLease, &Api::Impl::CancelLease, true},
    {Endpoint::kRememberedApproval, &Api::Impl::RevokeApproval, true},
    {Endpoint::kEvents, &Api::Impl::StreamEvents, true},
    {Endpoint::kChatCompletions, &Api::Impl::ChatCompletions, false},
    {Endpoint::kModels, &Api::Impl::ListModels, false},
    {Endpoint::kModel, &Api::Impl::GetModel, false},
    {Endpoint::kUi, &Api::Impl::ServeUi, false},
};

const HandlerEntry* FindHandler(Endpoint e) {
  for (const HandlerEntry& h : kHandlers) {
    if (h.endpoint == e) return &h;
  }
  return nullptr;
}

}  // namespace

Api::Api(Runtime& runtime, boost::asio::any_io_executor first_loop, std::shared_ptr<const KeyStore> keys,
         Metrics& metrics, ApiOptions options)
    : impl_(std::make_shared<Impl>(runtime, std::move(first_loop), std::move(keys), metrics, std::move(options))) {}

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
  const Route route = MatchRoute(req.path, req.method);
  std::string tenant;
  const KeyStore::Grant* grant = nullptr;
  // Admitted, routed, handled: the handler awaited here rather than in a coroutine of
  // its own, whose frame a turn would hold while it waits on its model.
  const HandlerEntry* entry = FindHandler(route.endpoint);
  if (co_await impl->Admitted(req, res, route, &tenant, &grant)) {
    const Exchange x{req, res, route.session_id, tenant, grant, route.label, start, route.item};  // named: see responses.h on GCC 12
    if (co_await impl->Routed(x, entry != nullptr && entry->per_session, entry != nullptr, route.endpoint, route.method)) {
      co_await (impl.get()->*(entry->handler))(x);
    }
  }
  // A held response is recorded when it is answered (Recorder).
  if (res.held()) co_return;
  impl->Record(req.method, req.path, req.remote, route.label, res.status(), tenant, std::chrono::steady_clock::now() - start);
}

// The frames of the request's path stay alive as long as its turn waits on the model:
// refusals are answered in coroutines of their own, whose frames (the error, its
// headers) are gone by then.
Task<bool> Api::Impl::Admitted(const ServerRequest& req, ServerResponse& res, const Route& route, std::string* tenant,
                               const KeyStore::Grant** grant) {
  Headers extra;
  std::optional<ApiError> refused = Admit(req, route, tenant, grant, &extra);
  if (!refused) co_return true;
  if (IsOpenAiEndpoint(route.endpoint)) {
    co_await SendChatError(res, *refused, extra);
  } else {
    co_await SendError(res, *refused, extra);
  }
  co_return false;
}

void Api::OnRuntimeEvent(const std::string& session_id, const TraceEvent& event) {
  impl_->Count(session_id, event);
  OnPeerEvent(session_id, event);
}

void Api::OnPeerEvent(const std::string& session_id, const TraceEvent& event) {
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

// Shutdown, authentication and rate limiting, before anything else. Every path but the
// open probes needs a key, unknown paths included: what a keyless client learns is 401.
std::optional<ApiError> Api::Impl::Admit(const ServerRequest& req, const Route& route, std::string* tenant,
                                         const KeyStore::Grant** grant, Headers* extra) {
  if (IsOpenEndpoint(route.endpoint)) return std::nullopt;
  if (shutting_down) return Err(503, "shutting_down", "the server is shutting down; retry against another instance");
  // A browser page of another origin, or a name rebound to loopback: before any key.
  const BrowserRules browser{keys != nullptr, options.allowed_origins, options.allowed_hosts};
  if (std::optional<RequestRefusal> refused = CheckBrowser(req.Header("host"), req.Header("origin"), browser)) {
    return ApiError{refused->status, refused->code, refused->message};
  }
  if (std::optional<RequestRefusal> refused = CheckBodyType(req.Header("content-type"), !req.body.empty(), keys != nullptr)) {
    return ApiError{refused->status, refused->code, refused->message};
  }
  std::string bucket = "local";
  if (keys) {
    std::string auth = req.Header("authorization");
    std::string key = auth.rfind("Bearer ", 0) == 0 ? auth.substr(7) : "";
    *grant = key.empty() ? nullptr : keys->Authenticate(key);
    if (key.empty()) return Err(401, "unauthorized", "send Authorization: Bearer <key> (create one with reins keys add TENANT)");
    if (*grant == nullptr) return Err(401, "unauthorized", "the API key is not valid");
    *tenant = (*grant)->tenant;
    bucket = Sha256Hex(key);
  }
  if (int64_t wait = limiter.Acquire(bucket, NowMs()); wait > 0) {
    (*extra)["Retry-After"] = std::to_string((wait + 999) / 1000);
    return Err(429, "rate_limited", "too many requests for this key; retry after the Retry-After delay");
  }
  return std::nullopt;
}

std::optional<ApiError> Api::Impl::ActAs(const KeyStore::Grant* grant, TurnInput& in) {
  if (grant == nullptr) return std::nullopt;
  if (!grant->SpeaksFor(in.speaker)) {
    std::string names;
    for (const std::string& s : grant->speakers) names += (names.empty() ? "" : ", ") + s;
    return Err(403, "speaker_not_allowed", "this API key speaks only for " + names + ", not for '" + in.speaker + "'");
  }
  in.roles = grant->roles;
  return std::nullopt;
}

void Api::Impl::Record(std::string_view method, std::string_view path, std::string_view remote, std::string_view route,
                       int status, std::string_view tenant, std::chrono::steady_clock::duration took) {
  double seconds = std::chrono::duration<double>(took).count();
  metrics.Inc("reins_http_requests_total", {{"route", route}, {"status", std::to_string(status)}});
  metrics.Observe("reins_http_request_duration_seconds", {{"route", route}}, seconds);
  if (route == "/healthz" || route == "/metrics") return;
  LogRequest(method, path, remote, route, status, static_cast<int64_t>(seconds * 1000), tenant, NowMs());
}

namespace {

// What the access log needs of a request whose response is held, kept until it is
// answered: the four texts in one string (one heap block instead of a block per text
// that does not fit in a std::string of its own), and the route, a literal (Route::label).
struct HeldRequestRecord {
  std::shared_ptr<Api::Impl> api;
  std::string texts;  // method, path, remote, tenant
  uint32_t method_size, path_size, remote_size;
  std::string_view route;
  std::chrono::steady_clock::time_point start;

  void operator()(int status) const {
    const std::string_view all = texts;
    const std::string_view method = all.substr(0, method_size);
    const std::string_view path = all.substr(method_size, path_size);
    const std::string_view remote = all.substr(method_size + path_size, remote_size);
    const std::string_view tenant = all.substr(method_size + path_size + remote_size);
    api->Record(method, path, remote, route, status, tenant, std::chrono::steady_clock::now() - start);
  }
};

}  // namespace

std::function<void(int)> Api::Impl::Recorder(const Exchange& x) {
  const ServerRequest& req = x.req;
  std::string texts;
  texts.reserve(req.method.size() + req.path.size() + req.remote.size() + x.tenant.size());
  texts.append(req.method).append(req.path).append(req.remote).append(x.tenant);
  return HeldRequestRecord{shared_from_this(), std::move(texts), static_cast<uint32_t>(req.method.size()),
                           static_cast<uint32_t>(req.path.size()), static_cast<uint32_t>(req.remote.size()), x.route,
                           x.start};
}

// Whether the request reaches its endpoint's handler (`found`: there is one); the
// refusal answered when it does not.
Task<bool> Api::Impl::Routed(Exchange x, bool per_session, bool found, Endpoint endpoint, const char* method) {
  if (!found) {
    ApiError e = Err(404, "not_found", "no such endpoint: " + x.req.path);
    co_await SendError(x.res, e);
    co_return false;
  }
  if (x.req.method != method) {
    ApiError e = WrongMethod(x.req.method, method);
    if (IsOpenAiEndpoint(endpoint)) {
      co_await SendChatError(x.res, e, AllowHeader(method));
    } else {
      co_await SendError(x.res, e, AllowHeader(method));
    }
    co_return false;
  }
  if (per_session) {
    if (auto missing = co_await CheckSession(x.session_id, x.tenant)) {
      co_await SendError(x.res, *missing);
      co_return false;
    }
  }
  co_return true;
}

}  // namespace reins
