#include "server/responses.h"

#include <unistd.h>

#include <cerrno>

#include "domain/detail_log.h"
#include "domain/json_text.h"
#include "reins/clock.h"
#include "server/chat_wire.h"
#include "telemetry/span.h"

namespace reins {

ApiError Err(int status, const char* code, std::string message) { return ApiError{status, code, std::move(message)}; }

ApiError FromStatus(const Status& s) {
  switch (s.code()) {
    case StatusCode::kNotFound: return {404, "not_found", s.message()};
    case StatusCode::kFailedPrecondition: return {409, "conflict", s.message()};
    case StatusCode::kInvalidArgument: return {422, "invalid", s.message()};
    // The one permission a turn checks: who may answer an approval (approval.approvers).
    case StatusCode::kPermissionDenied: return {403, "not_an_approver", s.message()};
    case StatusCode::kUnavailable:
      LogDetail("api", s.message());
      return {503, "unavailable", "a part of the server is unavailable; retry shortly"};
    default:
      LogDetail("api", s.ToString());
      return {500, "internal", "the server could not complete the request (the server log has the detail)"};
  }
}

ApiError TooManyReads(int max_reads) {
  return Err(429, "too_many_reads", "this tenant has " + std::to_string(max_reads) +
                                        " trace, timeline or session-list reads in flight; retry after the Retry-After delay");
}
ApiError Overloaded() { return Err(503, "overloaded", "too many turns in flight; retry after the Retry-After delay"); }

ApiError WrongMethod(const std::string& used, const char* allowed) {
  return Err(405, "method_not_allowed", used + " is not allowed here (use " + allowed + ")");
}

Headers AllowHeader(const char* method) { return {{"Allow", method}}; }
Headers ReplayHeader() { return {{"Idempotent-Replay", "true"}}; }
Headers RetryAfter(int seconds) { return {{"Retry-After", std::to_string(seconds)}}; }

// JsonText writes what dump() with replaced invalid UTF-8 writes, without its
// per-character serializer: every response body and log line goes through here.
std::string Dump(const Json& j) { return JsonText(j); }

Task<void> SendJson(ServerResponse& res, int status, Json body, Headers headers) {
  co_await SendJsonText(res, status, Dump(body), std::move(headers));
}

Task<void> SendJsonText(ServerResponse& res, int status, std::string text, Headers headers) {
  std::string type = kJsonType;
  co_await res.Respond(status, std::move(type), std::move(text), std::move(headers));
}

Task<void> SendError(ServerResponse& res, ApiError e, Headers headers) {
  co_await SendJson(res, e.status, ErrorJson(e), std::move(headers));
}

Task<void> SendChatError(ServerResponse& res, ApiError e, Headers headers) {
  // The official SDKs retry a 409 and a 429, which no retry cures when it is a conflict
  // or the tenant's session quota.
  if (e.status == 409 || e.code == "quota_exceeded") headers["x-should-retry"] = "false";
  co_await SendJson(res, e.status, OpenAiErrorJson(e), std::move(headers));
}

std::string TraceparentOf(const ServerRequest& req) {
  std::string header = req.Header("traceparent");
  return telemetry::ParseTraceparent(header) ? header : "";
}

namespace {

// One log line on stderr, written whole by one write(2): stderr is unbuffered, so a line
// is not interleaved with another thread's, and the stream's insert and flush cost about
// 1 k instructions per line more (three lines a served turn). A log line that cannot be
// written is not worth failing the request.
void WriteLine(std::string& text) {
  text += '\n';
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(STDERR_FILENO, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace

void Log(Json line, int64_t now_ms) {
  line["ts"] = FormatIsoTime(now_ms);
  if (!line.contains("level")) line["level"] = "info";
  std::string text = Dump(line);
  WriteLine(text);
}

void LogRequest(std::string_view method, std::string_view path, std::string_view remote, std::string_view route,
                int status, int64_t ms, std::string_view tenant, int64_t now_ms) {
  std::string line;
  line.reserve(256);
  JsonObjectText o(line);
  o.String("level", "info");
  o.String("method", method);
  o.Int("ms", ms);
  o.String("msg", "request");
  o.String("path", path);
  o.String("remote", remote);
  o.String("route", route);
  o.Int("status", status);
  o.String("tenant", tenant);
  o.String("ts", FormatIsoTime(now_ms));
  o.Close();
  WriteLine(line);
}

void LogTurn(const std::string& session_id, const TurnResult& r, int64_t now_ms) {
  std::string line;
  line.reserve(256);
  JsonObjectText o(line);
  o.String("level", "info");
  o.Int("model_calls", r.model_calls);
  o.String("msg", "turn");
  o.String("session_id", session_id);
  o.String("status", TurnStatusName(r.status));
  o.Int("tools", static_cast<int64_t>(r.tools.size()));
  o.String("ts", FormatIsoTime(now_ms));
  o.String("turn_id", r.turn_id);
  o.Close();
  WriteLine(line);
}

}  // namespace reins
