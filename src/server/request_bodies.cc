#include "server/request_bodies.h"

#include <charconv>
#include <limits>

#include "domain/json_parse.h"
#include "server/chat_wire.h"
#include "server/request_rules.h"

namespace reins {
namespace {

ApiError Bad(std::string message) { return ApiError{400, "bad_request", std::move(message)}; }

// The body as a JSON object, or why not (too deep included).
std::optional<ApiError> ReadObject(std::string_view body, Json* out) {
  Result<Json> parsed = ParseJson(body);
  if (!parsed.ok()) return Bad("the body is not valid JSON: " + parsed.status().message());
  if (!parsed->is_object()) return Bad("the body must be a JSON object");
  *out = std::move(parsed).value();
  return std::nullopt;
}

std::optional<int> ReadInt(std::string_view text) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

Json ErrorJson(const ApiError& e) { return {{"error", {{"code", e.code}, {"message", e.message}}}}; }

namespace {

// A turn's fields (POST .../turns, or a new session's `turn`) from its JSON object.
std::optional<ApiError> ReadTurn(Json& j, std::string_view idempotency_header, TurnInput* in) {
  for (const auto& [key, value] : j.items()) {
    if (key == "speaker" || key == "say" || key == "select" || key == "idempotency_key") {
      if (!value.is_string()) return Bad("'" + key + "' must be a string");
    } else if (key == "approve") {
      Result<ApprovalAnswer> answer = ApprovalAnswerFromJson(value);
      if (!answer.ok()) return Bad(answer.status().message());
      in->approve = std::move(answer).value();
    } else if (key == "page_context") {
      if (!value.is_object()) return Bad("'page_context' must be an object");
    } else {
      return Bad("unknown field '" + key + "' (expected speaker, say, select, approve, page_context, idempotency_key)");
    }
  }
  in->speaker = j.value("speaker", "user");
  if (j.contains("say")) in->say = j["say"].get<std::string>();
  if (j.contains("select")) in->select = j["select"].get<std::string>();
  if (j.contains("page_context")) in->page_context = std::move(j["page_context"]);
  const std::string from_body = j.value("idempotency_key", "");
  if (!idempotency_header.empty() && j.contains("idempotency_key") && from_body != idempotency_header) {
    return Bad("the Idempotency-Key header and the body's idempotency_key differ; send one of them");
  }
  in->idempotency_key = idempotency_header.empty() ? from_body : std::string(idempotency_header);
  if (j.contains("idempotency_key") && in->idempotency_key.empty()) return Bad("'idempotency_key' must not be empty");
  if (std::string reserved = ReservedKeyRefusal(in->idempotency_key); !reserved.empty()) return Bad(reserved);
  // The rest is what the runtime itself requires of any turn.
  if (Status ok = CheckTurnInput(*in); !ok.ok()) return Bad(ok.message());
  return std::nullopt;
}

}  // namespace

std::optional<ApiError> ParseSessionBody(std::string_view body, std::string_view idempotency_header, Json* metadata,
                                         std::unique_ptr<TurnInput>* first) {
  *metadata = Json::object();
  first->reset();
  if (body.empty()) return std::nullopt;
  Json j;
  if (auto bad = ReadObject(body, &j)) return bad;
  for (const auto& [key, value] : j.items()) {
    if (key != "metadata" && key != "turn") return Bad("unknown field '" + key + "' (expected metadata, turn)");
    if (!value.is_object()) return Bad("'" + key + "' must be an object");
  }
  if (j.contains("metadata")) *metadata = std::move(j["metadata"]);
  if (!j.contains("turn")) return std::nullopt;
  Json& turn = j["turn"];
  // A retried request would start another session: a turn that must run once is sent
  // to the session's own turns endpoint, where its key is kept.
  if (turn.contains("idempotency_key") || !idempotency_header.empty()) {
    return Bad("a new session's first turn takes no idempotency key: create the session, then send the turn "
               "with its key to POST /v1/sessions/{id}/turns");
  }
  if (turn.contains("select") || turn.contains("approve")) {
    return Bad("a new session has nothing to select or approve: 'select' and 'approve' answer a turn of an "
               "existing session");
  }
  auto in = std::make_unique<TurnInput>();
  if (auto bad = ReadTurn(turn, "", in.get())) return bad;
  *first = std::move(in);
  return std::nullopt;
}

std::optional<ApiError> ParseTurnBody(std::string_view body, std::string_view idempotency_header, TurnInput* in) {
  Json j;
  if (auto bad = ReadObject(body, &j)) return bad;
  return ReadTurn(j, idempotency_header, in);
}

std::optional<ApiError> ParseTraceQuery(std::string_view query, TraceQuery* out) {
  *out = TraceQuery{};
  for (const char* name : {"after", "limit"}) {
    std::optional<std::string> raw = QueryParam(query, name);
    if (!raw) continue;
    std::optional<int> value = ReadInt(*raw);
    const int min = std::string_view(name) == "after" ? 0 : 1;
    const int max = std::string_view(name) == "after" ? std::numeric_limits<int>::max() : kMaxTracePage;
    if (!value || *value < min || *value > max) {
      return Bad("'" + std::string(name) + "' must be a whole number from " + std::to_string(min) + " to " +
                 std::to_string(max));
    }
    out->paged = true;
    (std::string_view(name) == "after" ? out->after : out->limit) = *value;
  }
  return std::nullopt;
}

std::optional<ApiError> ParseSessionsQuery(std::string_view query, int* limit) {
  *limit = 50;
  std::optional<std::string> raw = QueryParam(query, "limit");
  if (!raw) return std::nullopt;
  std::optional<int> value = ReadInt(*raw);
  if (!value || *value < 1 || *value > kMaxSessionsListed) {
    return Bad("'limit' must be a whole number from 1 to " + std::to_string(kMaxSessionsListed));
  }
  *limit = *value;
  return std::nullopt;
}

}  // namespace reins
