// Responses: how the API answers. JSON bodies and errors ({"error":{"code","message"}}),
// the runtime's refusals mapped to HTTP statuses, and the server's log lines.
//
// GCC 12 mishandles string literals, initializer lists and temporaries bound to
// references inside coroutine bodies, so the coroutines of the handlers build what
// they send with these plain functions and pass arguments by value.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "reins/async.h"
#include "reins/json.h"
#include "reins/status.h"
#include "reins/turn.h"
#include "server/http_server.h"
#include "server/request_bodies.h"

namespace reins {

using Headers = std::map<std::string, std::string>;

inline constexpr const char* kJsonType = "application/json";

ApiError Err(int status, const char* code, std::string message);
// A runtime refusal as the API's status. Refusals explain themselves; a failure of
// reins' own parts may name files and internals, so the client gets a plain sentence
// and the detail goes to the log.
ApiError FromStatus(const Status& s);
ApiError Overloaded();  // --max-inflight turns are running already
ApiError TooManyReads(int max_reads);  // the tenant has --max-trace-reads heavy reads in flight (429)
ApiError WrongMethod(const std::string& used, const char* allowed);

Headers AllowHeader(const char* method);
Headers ReplayHeader();  // an idempotent replay: the first try's stored result
Headers RetryAfter(int seconds);

std::string Dump(const Json& j);  // compact; invalid UTF-8 replaced

Task<void> SendJson(ServerResponse& res, int status, Json body, Headers headers = {});
// A body already written as JSON text (TurnResultText, a stored result).
Task<void> SendJsonText(ServerResponse& res, int status, std::string text, Headers headers = {});
Task<void> SendError(ServerResponse& res, ApiError e, Headers headers = {});
// The same in the OpenAI error shape, for the OpenAI-compatible endpoints (chat_wire.h).
Task<void> SendChatError(ServerResponse& res, ApiError e, Headers headers = {});

// The request's W3C `traceparent` when it is well formed, else "" (a malformed one is
// ignored, as the Trace Context specification says: the turn starts a trace of its own).
std::string TraceparentOf(const ServerRequest& req);

// One JSON line on stderr, stamped with `now_ms` (the runtime's clock).
void Log(Json line, int64_t now_ms);
// The two lines written on every turn, as Log would write them (keys in order), straight
// to text: one per request answered, one per turn.
void LogRequest(std::string_view method, std::string_view path, std::string_view remote, std::string_view route,
                int status, int64_t ms, std::string_view tenant, int64_t now_ms);
inline void LogRequest(const ServerRequest& req, std::string_view route, int status, int64_t ms, std::string_view tenant,
                       int64_t now_ms) {
  LogRequest(req.method, req.path, req.remote, route, status, ms, tenant, now_ms);
}
void LogTurn(const std::string& session_id, const TurnResult& r, int64_t now_ms);

}  // namespace reins
