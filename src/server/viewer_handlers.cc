// The trace viewer (docs/trace-viewer.md): its page, style and scripts from the binary
// (src/ui) under a strict Content-Security-Policy, and GET /v1/sessions, the list it
// opens on. The files need no key; every session it shows is read with the caller's.
#include "domain/text.h"
#include "domain/timeline.h"
#include "server/api_impl.h"
#include "server/stored_turn_json.h"
#include "ui/assets.h"

namespace reins {
namespace {

// Scripts, styles and requests from this server only; no inline script or style, no
// plugins, frames, forms posting elsewhere or base rewrites. Model and tool text is
// rendered as text (src/ui/timeline.js); this is the second wall.
constexpr const char* kPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

Headers UiHeaders() {
  return {{"Content-Security-Policy", kPolicy},
          {"X-Content-Type-Options", "nosniff"},
          {"Referrer-Policy", "no-referrer"},
          {"Cache-Control", "no-cache"}};
}

constexpr size_t kOpeningChars = 140;  // of a session's first message, in the list

// The list, each session with who opened it and with what words (`opened_by`,
// `opened_with`): an auditor scanning the list looks for a person or a request, not an
// id. The store reads them with the list (Store::RecentSessions), not a turn each.
Json SessionsJson(const std::vector<SessionSummary>& list) {
  Json sessions = Json::array();
  for (const SessionSummary& s : list) {
    Json j = SessionSummaryJson(s);
    if (!s.opened_with.is_null()) {
      j["opened_by"] = s.opened_by;
      j["opened_with"] = Clipped(SaidText(s.opened_with), kOpeningChars);
    }
    sessions.push_back(std::move(j));
  }
  return Json{{"sessions", std::move(sessions)}};
}

}  // namespace

Task<void> Api::Impl::ServeUi(Exchange x) {
  if (x.session_id.empty()) {  // /ui: the page's relative links need the slash
    Headers to = {{"Location", "/ui/"}};
    std::string type = "text/plain; charset=utf-8";
    std::string body = "/ui/\n";
    co_return co_await x.res.Respond(308, std::move(type), std::move(body), std::move(to));
  }
  const UiAsset* asset = FindUiAsset(x.session_id);
  if (asset == nullptr) {
    ApiError e = Err(404, "not_found", "the viewer has no file " + x.session_id);
    co_return co_await SendError(x.res, e);
  }
  std::string type(asset->content_type);
  std::string body(asset->text);
  co_await x.res.Respond(200, std::move(type), std::move(body), UiHeaders());
}

Task<void> Api::Impl::ListSessions(Exchange x) {
  int limit = 0;
  if (auto bad = ParseSessionsQuery(x.req.query, &limit)) co_return co_await SendError(x.res, *bad);
  // A read of up to `limit` sessions, each with its lease: on the tenant's read budget.
  std::optional<std::shared_ptr<void>> slot = TakeReadSlot(x.tenant);
  if (!slot) co_return co_await SendError(x.res, TooManyReads(options.max_trace_reads), RetryAfter(1));
  const SessionView& view = sessions;
  const std::optional<std::string> tenant = x.tenant;  // "" without keys: the sessions made without one
  std::function<Result<Json>()> read = [&view, tenant, limit]() -> Result<Json> {
    REINS_ASSIGN_OR_RETURN(const std::vector<SessionSummary> list, view.Recent(tenant, limit));
    return SessionsJson(list);
  };
  Result<Json> body = co_await OnSync<Result<Json>>(readers.get_executor(), std::move(read));
  if (!body.ok()) co_return co_await SendError(x.res, FromStatus(body.status()));
  co_await SendJson(x.res, 200, *std::move(body));
}

}  // namespace reins
