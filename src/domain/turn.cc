#include "reins/turn.h"

#include <algorithm>
#include <cstring>

#include "domain/json_parse.h"
#include "domain/json_text.h"
#include "reins/clock.h"

namespace reins {

std::string_view TurnStatusName(TurnStatus s) {
  switch (s) {
    case TurnStatus::kCompleted: return "completed";
    case TurnStatus::kAwaitingClarification: return "awaiting_clarification";
    case TurnStatus::kAwaitingApproval: return "awaiting_approval";
    case TurnStatus::kBlocked: return "blocked";
    case TurnStatus::kCancelled: return "cancelled";
    case TurnStatus::kFailed: return "failed";
  }
  return "failed";
}

Status CheckTurnInput(const TurnInput& in) {
  constexpr size_t kMaxSpeaker = 128;
  constexpr size_t kMaxIdempotencyKey = 200;
  if (in.speaker.empty() || in.speaker.size() > kMaxSpeaker) return InvalidArgument("'speaker' must be 1 to 128 characters");
  const std::string& key = in.idempotency_key;
  const bool printable = std::all_of(key.begin(), key.end(), [](unsigned char c) { return c >= 0x21 && c <= 0x7e; });
  if (key.size() > kMaxIdempotencyKey || !printable) {
    return InvalidArgument("an idempotency key is 1 to 200 printable ASCII characters without spaces");
  }
  if (in.cancel) return OkStatus();
  const int given = (in.say ? 1 : 0) + (in.select ? 1 : 0) + (in.approve ? 1 : 0);
  if (given != 1) return InvalidArgument("a turn needs exactly one of say, select or approve");
  return OkStatus();
}

std::string_view ToolOutcomeStatusName(ToolOutcome::Status s) {
  switch (s) {
    case ToolOutcome::Status::kExecuted: return "executed";
    case ToolOutcome::Status::kDeferred: return "deferred";
    case ToolOutcome::Status::kRejected: return "rejected";
    case ToolOutcome::Status::kSkipped: return "skipped";
  }
  return "skipped";
}

Json PlanStepToJson(const PlanStep& st) {
  Json j = {{"id", st.id}, {"description", st.description}, {"stepType", st.step_type},
            {"requiredTools", st.required_tools}, {"expectedOutcome", st.expected_outcome},
            {"toolValidationMode", kValidationModes.Name(st.validation_mode)}, {"status", kStepStatuses.Name(st.status)},
            {"validationStatus", kStepValidations.Name(st.validation_status)}, {"actualToolCalls", st.actual_tool_calls},
            {"retries", st.retries}, {"outcome", st.outcome}};
  if (!st.deferred_writes.empty()) {
    Json writes = Json::object();  // keyed by idempotency key: the store updates one in place
    for (const PlanStep::Write& w : st.deferred_writes) writes[w.key] = {{"tool", w.tool}, {"outcome", w.outcome}};
    j["deferredWrites"] = std::move(writes);
  }
  return j;
}

PlanStep PlanStepFromJson(const Json& j) {
  PlanStep st;
  if (!j.is_object()) return st;
  st.id = j.value("id", "");
  st.description = j.value("description", "");
  st.step_type = j.value("stepType", "reasoning");
  st.required_tools = j.value("requiredTools", std::vector<std::string>{});
  st.expected_outcome = j.value("expectedOutcome", "");
  st.validation_mode = kValidationModes.Parse(j.value("toolValidationMode", "")).value_or(ValidationMode::kStrict);
  st.status = kStepStatuses.Parse(j.value("status", "")).value_or(StepStatus::kPending);
  st.validation_status = kStepValidations.Parse(j.value("validationStatus", "")).value_or(StepValidation::kNone);
  st.actual_tool_calls = j.value("actualToolCalls", std::vector<std::string>{});
  st.retries = j.value("retries", 0);
  st.outcome = j.value("outcome", "");
  if (auto writes = j.find("deferredWrites"); writes != j.end() && writes->is_object()) {
    for (const auto& [key, w] : writes->items()) {
      st.deferred_writes.push_back({key, w.value("tool", ""), w.value("outcome", "queued")});
    }
  }
  return st;
}

Json TurnInputToJson(const TurnInput& in) {
  Json j = JsonObject("speaker", in.speaker);
  if (in.say) j["say"] = *in.say;
  if (in.select) j["select"] = *in.select;
  if (in.approve) j["approve"] = *in.approve;
  if (in.cancel) j["cancel"] = true;
  if (!in.page_context.is_null()) j["page_context"] = in.page_context;
  if (!in.idempotency_key.empty()) j["idempotency_key"] = in.idempotency_key;
  if (!in.traceparent.empty()) j["traceparent"] = in.traceparent;
  return j;
}

namespace {

void AppendStrings(std::string& out, const std::vector<std::string>& items) {
  out += '[';
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ',';
    AppendJsonString(out, items[i]);
  }
  out += ']';
}

void AppendToolText(std::string& out, const ToolOutcome& t) {
  JsonObjectText o(out);
  o.Value("args", t.args);
  if (t.result) o.Int("latency_ms", t.latency_ms);
  if (!t.message.empty()) o.String("message", t.message);
  o.String("name", t.name);
  if (t.result) o.String("next_action", NextActionName(t.result->next_action));
  if (!t.reason.empty()) o.String("reason", t.reason);
  o.String("status", ToolOutcomeStatusName(t.status));
  if (t.result) o.Bool("success", t.result->success);
  o.Close();
}

// The approval a turn leaves pending, as the API shows it (docs/http-api.md).
Json PendingApprovalToJson(const PendingApproval& a) {
  Json j = {{"id", a.id}, {"tool", a.tool}, {"args", a.args}, {"reason", kApprovalReasons.Name(a.reason)}};
  if (!a.prompt.empty()) j["prompt"] = a.prompt;
  if (!a.provenance.is_null()) j["provenance"] = a.provenance;
  return j;
}

}  // namespace

// Members in the order of the keys (the order a DOM of it is written in), so the text
// is the same whichever way a caller gets it. The common members are written directly;
// the ones a turn rarely has go through their DOM.
std::string TurnResultText(const TurnResult& r, bool with_tools) {
  std::string out;
  out.reserve(256 + r.reply.size() + (with_tools ? 160 * r.tools.size() : 0));
  JsonObjectText o(out);
  if (r.approval) o.Value("approval", PendingApprovalToJson(*r.approval));
  if (!r.audit.is_null()) o.Value("audit", r.audit);
  if (!r.blocked_reason.empty()) o.String("blocked_reason", r.blocked_reason);
  if (r.clarification) {
    Json c = ClarificationToJson(r.clarification->clarification);
    c["id"] = r.clarification->id;
    o.Value("clarification", c);
  }
  if (!r.error.empty()) o.String("error", r.error);
  if (r.lease) {
    o.Value("lease", {{"owner", r.lease->owner}, {"domain", r.lease->domain},
                      {"expires_at", FormatIsoTime(r.lease->expires_at_ms)}});
  }
  AppendStrings(o.Key("notices"), r.notices);
  if (!r.plan.empty()) {
    Json steps = Json::array();
    for (const PlanStep& st : r.plan) steps.push_back(PlanStepToJson(st));
    o.Value("plan", {{"steps", std::move(steps)}});
  }
  AppendStrings(o.Key("rails"), r.rails);
  o.String("reply", r.reply);
  o.String("status", TurnStatusName(r.status));
  std::string& tools = o.Key("tools");
  tools += '[';
  for (size_t i = 0; with_tools && i < r.tools.size(); ++i) {
    if (i > 0) tools += ',';
    AppendToolText(tools, r.tools[i]);
  }
  tools += ']';
  o.String("turn_id", r.turn_id);
  o.Close();
  return out;
}

Json TurnResultToJson(const TurnResult& r, bool with_tools) {
  // Our own text, so it parses; the text form is the one definition of the shape. A
  // tool's arguments were read within kMaxJsonDepth and sit a few levels down here.
  return ParseJsonOrDiscarded(TurnResultText(r, with_tools), kMaxStoredJsonDepth);
}

EventData::EventData(const Json& value) {
  std::string& scratch = EventTextBuffer();  // written there, then copied once at its size
  AppendJsonText(scratch, value);
  block_ = Copy(scratch);
}

EventData EventData::FromText(std::string_view compact_json) {
  EventData data;
  data.block_ = Copy(compact_json);
  return data;
}

std::unique_ptr<char[]> EventData::Copy(std::string_view text) {
  if (text == "{}") return nullptr;
  const auto size = static_cast<uint32_t>(text.size());
  std::unique_ptr<char[]> block(new char[sizeof size + text.size()]);
  std::memcpy(block.get(), &size, sizeof size);
  std::memcpy(block.get() + sizeof size, text.data(), text.size());
  return block;
}

Json EventData::json() const { return ParseJsonOrDiscarded(text(), kMaxStoredJsonDepth); }

bool EventData::contains(std::string_view key) const {
  const Json value = json();
  return value.is_object() && value.contains(key);
}

Json TraceEventToJson(const TraceEvent& e) {
  return {{"type", std::string(e.name())}, {"turn", e.turn}, {"at_ms", e.at_ms}, {"data", e.data.json()}};
}

TraceEvent TraceEventFromJson(const Json& j) {
  TraceEvent e;
  if (!j.is_object()) return e;
  e.type = EventTypeFromName(j.value("type", ""));
  e.turn = j.value("turn", 0);
  e.at_ms = j.value("at_ms", int64_t{0});
  if (auto it = j.find("data"); it != j.end()) e.data = *it;
  return e;
}

}  // namespace reins
