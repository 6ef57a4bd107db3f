#include "store/row_json.h"

#include "domain/json_parse.h"
#include "domain/json_text.h"

namespace reins::store {

std::string DumpJson(const Json& j) { return JsonText(j); }

std::string DumpEvents(const std::vector<TraceEvent>& events) {
  std::string out;
  out.reserve(events.size() * 256);
  AppendEvents(out, events);
  return out;
}

void AppendEvents(std::string& out, const std::vector<TraceEvent>& events) {
  out += '[';
  for (size_t i = 0; i < events.size(); ++i) {
    const TraceEvent& e = events[i];
    if (i > 0) out += ',';
    out += R"({"type":")";
    out += e.name();  // [a-z_.] only: nothing to escape
    out += R"(","turn":)";
    AppendJsonInt(out, e.turn);
    out += R"(,"at_ms":)";
    AppendJsonInt(out, e.at_ms);
    out += R"(,"data":)";
    out += e.data.text();
    out += '}';
  }
  out += ']';
}

TurnText TurnTextOf(const TurnRecord& turn) {
  TurnText out;
  FillTurnText(turn, out);
  return out;
}

void FillTurnText(const TurnRecord& turn, TurnText& out) {
  out.input.clear();
  AppendJsonText(out.input, turn.input);
  out.result = TurnResultText(turn.result, /*with_tools=*/false);
  out.events.clear();
  AppendEvents(out.events, turn.result.events);
  out.messages.clear();
  out.messages += '[';  // (assigning a one-byte literal here trips GCC 12's -Wrestrict at -O3)
  for (size_t i = 0; i < turn.new_messages.size(); ++i) {
    if (i > 0) out.messages += ',';
    AppendMessageText(out.messages, turn.new_messages[i]);
  }
  out.messages += ']';
  out.idempotency_key.reset();
  if (turn.input.is_object() && turn.input.contains("idempotency_key")) {
    out.idempotency_key = turn.input.value("idempotency_key", "");
  }
}

Result<Json> ParseStoredJson(std::string_view text, const std::string& where) {
  Json j = ParseJsonOrDiscarded(text, kMaxStoredJsonDepth);
  if (j.is_discarded()) return Internal(where + " holds invalid JSON");
  return j;
}

Result<std::vector<TraceEvent>> ParseStoredEvents(std::string_view text, const std::string& where) {
  REINS_ASSIGN_OR_RETURN(Json events, ParseStoredJson(text, where));
  if (!events.is_array()) return Internal(where + " are not a list");
  std::vector<TraceEvent> out;
  out.reserve(events.size());
  for (const Json& e : events) out.push_back(TraceEventFromJson(e));
  return out;
}

Status AppendStoredMessages(std::string_view text, int64_t number, const std::string& session_id,
                            std::vector<Message>& out) {
  const std::string turn = "turn " + std::to_string(number) + " of session '" + session_id + "'";
  Json list = ParseJsonOrDiscarded(text, kMaxStoredJsonDepth);
  if (list.is_discarded() || !list.is_array()) return Internal("the messages of " + turn + " are corrupt: not a JSON list");
  for (size_t i = 0; i < list.size(); ++i) {
    Message m;
    if (!MessageFromJson(list[i], &m)) {
      return Internal("message " + std::to_string(i + 1) + " of " + turn + " is corrupt: it is not a valid message JSON");
    }
    out.push_back(std::move(m));
  }
  return {};
}

Status SessionNotFound(const std::string& session_id) {
  return NotFound("session '" + session_id + "' does not exist");
}

Status CheckBegunSession(const TurnRecord& turn) {
  if (!turn.new_session || turn.new_session->id == turn.session_id) return {};
  return InvalidArgument("turn '" + turn.result.turn_id + "' begins session '" + turn.new_session->id +
                         "' but belongs to session '" + turn.session_id + "'");
}

Status OutcomeAlreadyRecorded(const std::string& key) {
  return AlreadyExists("the outcome of deferred call '" + key + "' is already recorded; this delivery repeated it");
}

Status WriteAlreadyFinished(const std::string& key) {
  return AlreadyExists("the outcome of write '" + key + "' is already recorded");
}

Status WriteNotBegun(const std::string& key) { return NotFound("write '" + key + "' was never begun"); }

}  // namespace reins::store
