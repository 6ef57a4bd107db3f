// RequestBodies: the JSON bodies and query strings of the HTTP API, read field by
// field into typed values, or refused with the status and a sentence naming the field
// (docs/http-api.md). Pure functions: the handlers, the fuzz targets and the tests
// share them. Bodies are parsed with the depth limit of domain/json_parse.h.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "reins/json.h"
#include "reins/turn.h"

namespace reins {

// A request the API refuses: status, code, message.
struct ApiError {
  int status = 400;
  std::string code;
  std::string message;
};
Json ErrorJson(const ApiError& e);

// POST /v1/sessions: `{metadata?, turn?}` (an empty body is `{}`). `turn` is the new
// session's first turn (the fields of POST .../turns), run as the session is created;
// `*first` is left empty without one. A first turn takes no idempotency key (in the body
// or `idempotency_header`): a retry would start another session. Nor `select` or
// `approve`: a new session has nothing pending.
std::optional<ApiError> ParseSessionBody(std::string_view body, std::string_view idempotency_header, Json* metadata,
                                         std::unique_ptr<TurnInput>* first);

// POST .../turns. The idempotency key comes in the `Idempotency-Key` header or the
// body's `idempotency_key` (the same value if both are given).
std::optional<ApiError> ParseTurnBody(std::string_view body, std::string_view idempotency_header, TurnInput* in);

// GET .../trace: no parameters is every turn; `after` and/or `limit` ask for a page.
struct TraceQuery {
  bool paged = false;
  int after = 0;
  int limit = 100;
};
inline constexpr int kMaxTracePage = 1000;
std::optional<ApiError> ParseTraceQuery(std::string_view query, TraceQuery* out);

// GET /v1/sessions?limit=N: how many of the newest sessions to list (1 to 1000, default 50).
inline constexpr int kMaxSessionsListed = 1000;
std::optional<ApiError> ParseSessionsQuery(std::string_view query, int* limit);

}  // namespace reins
