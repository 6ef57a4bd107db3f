#include "reins/turn.h"

#include <algorithm>
#include <cstring>

#include "domain/json_parse.h"
#include "domain/json_text.h"
#include "domain/stored_json.h"
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
  if (in.cancel || !in.revoke.empty()) {
    const bool alone = !in.say && !in.select && !in.approve && !(in.cancel && !in.revoke.empty());
    return alone ? OkStatus() : InvalidArgument("a cancel or a revoke says nothing else");
  }
  const int given = (in.say ? 1 : 0) + (in.select ? 1 : 0) + (in.approve ? 1 : 0);
  if (given != 1) return InvalidArgument("a turn needs exactly one of say, select or approve");
  return OkStatus();
}

Result<ApprovalAnswer> ApprovalAnswerFromJson(const Json& j) {
  constexpr size_t kMaxMessage = 2000;
  if (j.is_boolean()) return ApprovalAnswer(j.get<bool>());
  if (!j.is_object()) return InvalidArgument("'approve' must be true, false or {decision, args?, message?, remember?}");
  ApprovalAnswer a;
  bool decided = false;
  for (const auto& [key, value] : j.items()) {
    if (key == "decision" && value.is_boolean()) {
      a.decision = value.get<bool>();
      decided = true;
    } else if (key == "args" && value.is_object()) {
      a.args = value;
    } else if (key == "message" && value.is_string() && value.get_ref<const std::string&>().size() <= kMaxMessage) {
      a.message = value.get<std::string>();
    } else if (key == "remember" && value.is_boolean()) {
      a.remember = value.get<bool>();
    } else if (key == "decision" || key == "args" || key == "message" || key == "remember") {
      return InvalidArgument("'approve." + key + "' must be " +
                             (key == "args" ? "an object of arguments" : key == "message" ? "a string of at most 2000 characters" : "true or false"));
    } else {
      return InvalidArgument("unknown field 'approve." + key + "' (expected decision, args, message, remember)");
    }
  }
  if (!decided) return InvalidArgument("'approve' needs 'decision': true or false");
  if (!a.decision && !a.args.is_null()) return InvalidArgument("'approve.args' changes a call to approve; a denial has none");
  if (!a.decision && a.remember) return InvalidArgument("'approve.remember' allows a tool from now on; a denial cannot");
  return a;
}

Json ApprovalAnswerToJson(const ApprovalAnswer& a) {
  if (a.plain()) return a.decision;
  Json j = {{"decision", a.decision}};
  if (!a.args.is_null()) j["args"] = a.args;
  if (!a.message.empty()) j["message"] = a.message;
  if (a.remember) j["remember"] = true;
  return j;
}

std::optional<std::string> PendingApproval::AdmittedAs(const std::string& speaker,
                                                      const std::vector<std::string>& roles) const {
  static const std::vector<std::string> kRequester = {"requester"};
  for (const std::string& a : approvers.empty() ? kRequester : approvers) {
    // "requester", "any" and "role:NAME" are kinds of approver, never names: a speaker
    // who calls themself "role:pharmacist" is not admitted as one.
    const bool is_role = a.starts_with("role:");
    const bool admits = a == "any" || (a == "requester" && (requested_by.empty() || speaker == requested_by)) ||
                        (is_role && std::find(roles.begin(), roles.end(), a.substr(5)) != roles.end()) ||
                        (!is_role && a != "requester" && a == speaker);
    if (admits) return a;
  }
  return std::nullopt;
}

std::string PendingApproval::ApproversInWords() const {
  const std::vector<std::string> who = approvers.empty() ? std::vector<std::string>{"requester"} : approvers;
  std::string out;
  for (size_t i = 0; i < who.size(); ++i) {
    if (i > 0) out += i + 1 == who.size() ? " or " : ", ";
    out += who[i] == "requester" ? "the person who asked (" + requested_by + ")" : who[i] == "any" ? "anyone" : who[i];
  }
  return out;
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
  if (in.approve) j["approve"] = ApprovalAnswerToJson(*in.approve);
  if (in.cancel) j["cancel"] = true;
  if (!in.revoke.empty()) j["revoke"] = in.revoke;
  if (!in.page_context.is_null()) j["page_context"] = in.page_context;
  if (!in.idempotency_key.empty()) j["idempotency_key"] = in.idempotency_key;
  if (!in.traceparent.empty()) j["traceparent"] = in.traceparent;
  if (!in.words.empty()) j["words"] = in.words;
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

}  // namespace

// The approval a turn leaves pending, as the API shows it (docs/http-api.md).
Json PendingApprovalToJson(const PendingApproval& a) {
  Json j = {{"id", a.id}, {"tool", a.tool}, {"args", a.args}, {"reason", kApprovalReasons.Name(a.reason)}};
  if (!a.prompt.empty()) j["prompt"] = a.prompt;
  if (!a.provenance.is_null()) j["provenance"] = a.provenance;
  j["approvers"] = a.approvers.empty() ? std::vector<std::string>{"requester"} : a.approvers;
  if (!a.requested_by.empty()) j["requested_by"] = a.requested_by;
  if (a.expires_at_ms != 0) j["expires_at"] = FormatIsoTime(a.expires_at_ms);
  if (a.allow_edit) j["allow_edit"] = true;
  if (a.may_remember) j["remember"] = "session";
  return j;
}

Json PendingApprovalToStored(const PendingApproval& a) {
  Json p = {{"id", a.id}, {"tool", a.tool}, {"args", a.args}, {"request_text", a.request_text}};
  if (!a.request_tools.empty()) p["request_tools"] = a.request_tools;
  if (a.reason != ApprovalReason::kPolicy) p["reason"] = kApprovalReasons.Name(a.reason);
  if (!a.prompt.empty()) p["prompt"] = a.prompt;
  if (!a.provenance.is_null()) p["provenance"] = a.provenance;
  if (!a.requested_by.empty()) p["requested_by"] = a.requested_by;
  if (!a.approvers.empty()) p["approvers"] = a.approvers;
  if (a.expires_at_ms != 0) p["expires_at_ms"] = a.expires_at_ms;
  if (a.allow_edit) p["allow_edit"] = true;
  if (a.may_remember) p["may_remember"] = true;
  return p;
}

PendingApproval PendingApprovalFromStored(const Json& j) {
  PendingApproval a;
  a.id = j.value("id", "");
  a.tool = j.value("tool", "");
  a.args = j.value("args", Json::object());
  a.request_text = j.value("request_text", "");
  a.request_tools = StoredStrings(j, "request_tools");
  a.reason = kApprovalReasons.Parse(j.value("reason", "")).value_or(ApprovalReason::kPolicy);
  a.prompt = j.value("prompt", "");
  a.provenance = j.value("provenance", Json());
  a.requested_by = j.value("requested_by", "");
  a.approvers = StoredStrings(j, "approvers");
  a.expires_at_ms = j.value("expires_at_ms", int64_t{0});
  a.allow_edit = j.value("allow_edit", false);
  a.may_remember = j.value("may_remember", false);
  return a;
}

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
