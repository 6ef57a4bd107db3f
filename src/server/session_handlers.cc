// POST /v1/sessions (with or without the session's first turn) and GET
// /v1/sessions/{id}; a new session within the tenant's quota (NewSession, which the
// OpenAI-compatible door shares); and the check every per-session endpoint makes first.
#include "server/api_impl.h"
#include "server/stored_turn_json.h"

namespace reins {
namespace {

Json CreatedJson(const std::string& id, const std::string& greeting) {
  Json body = JsonObject("session_id", id);
  if (!greeting.empty()) body["greeting"] = greeting;
  return body;
}

}  // namespace

Task<void> Api::Impl::CreateSession(Exchange x) {
  Json metadata;
  std::unique_ptr<TurnInput> first;
  std::optional<ApiError> bad = ParseSessionBody(x.req.body, x.req.Header("idempotency-key"), &metadata, &first);
  if (!bad && first) bad = ActAs(x.grant, *first);
  if (bad) co_return co_await SendError(x.res, *bad);
  if (first) co_return co_await StartSession(x, std::move(metadata), std::move(first));
  Result<std::string> id = co_await NewSession(std::move(metadata), x.tenant);
  if (!id.ok()) co_return co_await SendError(x.res, SessionRefusal(id.status()));
  co_await SendJson(x.res, 201, CreatedJson(*id, runtime.Greeting()));
}

std::string SessionBegunText(const std::string& id, const std::string& greeting, std::string_view turn) {
  std::string text = Dump(CreatedJson(id, greeting));
  text.pop_back();  // the object's '}'
  text += ",\"turn\":";
  text += turn;
  text += '}';
  return text;
}

Task<Result<std::string>> Api::Impl::NewSession(Json metadata, std::string tenant) {
  const std::optional<int64_t> quota = keys ? keys->MaxSessions(tenant) : std::nullopt;
  Runtime& rt = runtime;
  // Counted and created in one step on the first loop (OnFirstLoop): two concurrent
  // requests to this server cannot both take the last place. (Replicas count
  // separately; a quota is exact per replica.) Without a quota, only the store is
  // involved.
  Result<std::string> id = Internal("the session was not created");
  if (quota) {
    std::function<Task<Result<std::string>>()> work = [&rt, metadata, tenant, quota]() -> Task<Result<std::string>> {
      REINS_CO_ASSIGN_OR_RETURN(const int64_t count, rt.sessions().CountSessions(tenant));
      if (count >= *quota) {
        co_return ResourceExhausted("tenant '" + tenant + "' has " + std::to_string(count) +
                                    " sessions, its quota (max_sessions in the keys file)");
      }
      co_return rt.CreateSession(metadata, tenant);
    };
    id = co_await OnFirstLoop<Result<std::string>>(std::move(work));
  } else {
    std::function<Result<std::string>()> create = [&rt, metadata, tenant] { return rt.CreateSession(metadata, tenant); };
    id = co_await OnStore<Result<std::string>>(std::move(create));
  }
  if (id.ok()) metrics.Inc("reins_sessions_created_total");
  co_return id;
}

ApiError SessionRefusal(const Status& s) {
  if (s.code() == StatusCode::kResourceExhausted) return Err(429, "quota_exceeded", s.message());
  return FromStatus(s);
}

// Another tenant's session is reported exactly like a missing one. A store that cannot
// be read is not a missing session: the client is told to retry.
Task<std::optional<ApiError>> Api::Impl::CheckSession(std::string id, std::string tenant) {
  const SessionView& view = sessions;
  Result<std::string> owner = NotFound("");
  if (std::optional<std::string> known = view.KnownTenant(id)) {
    owner = *std::move(known);  // no hop to the store
  } else {
    std::function<Result<std::string>()> read = [&view, id] { return view.TenantOf(id); };
    owner = co_await OnStore<Result<std::string>>(std::move(read));
  }
  if (!owner.ok() && owner.status().code() != StatusCode::kNotFound) co_return FromStatus(owner.status());
  if (!owner.ok() || *owner != tenant) co_return ApiError{404, "not_found", "no session " + id};
  co_return std::nullopt;
}

Task<void> Api::Impl::GetSession(Exchange x) {
  const SessionView& view = sessions;
  const std::string id = x.session_id;
  std::function<Result<Json>()> read = [&view, id]() -> Result<Json> {
    REINS_ASSIGN_OR_RETURN(const SessionSummary summary, view.Describe(id));
    return SessionSummaryJson(summary);
  };
  Result<Json> body = co_await OnStore<Result<Json>>(std::move(read));
  if (!body.ok()) co_return co_await SendError(x.res, FromStatus(body.status()));
  co_await SendJson(x.res, 200, *body);
}

}  // namespace reins
