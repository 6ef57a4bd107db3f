#include "domain/timeline.h"

#include <set>

#include "domain/json_text.h"

namespace reins {
namespace {

// A value as a person reads it: a string as it is, anything else as compact JSON.
std::string Text(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return JsonText(v);
}

// d[key] as text (`otherwise` when absent): stored traces may come from other versions,
// so no field is trusted to have the type this build writes.
std::string StrOr(const Json& d, const char* key, const char* otherwise) {
  return d.is_object() && d.contains(key) ? Text(d[key]) : otherwise;
}

std::string Str(const Json& d, const char* key) { return StrOr(d, key, ""); }

bool Flag(const Json& d, const char* key) {
  return d.is_object() && d.contains(key) && d[key].is_boolean() && d[key].get<bool>();
}

using Details = std::vector<std::pair<std::string, std::string>>;

// How a renderer colours an outcome: "bad" where the call or the turn did not do what
// was asked, "held" where reins held, changed or paused something, "ok" otherwise.
const char* Tone(const std::string& outcome) {
  static const std::set<std::string> bad = {"rejected", "failed", "failed after the reply", "error", "turn failed",
                                            "blocked", "denied", "action not done", "invalid verdict"};
  static const std::set<std::string> ok = {"executed", "ran after the reply", "answered", "granted", "opened",
                                           "released", "accept", "planned", "delivered"};
  if (bad.contains(outcome)) return "bad";
  if (ok.contains(outcome) || outcome.rfind("proposed", 0) == 0) return "ok";
  return "held";
}

Json Step(const char* kind, std::string outcome, std::string title, std::string why, int64_t at_ms, const Details& details) {
  Json d = Json::array();
  for (const auto& [label, text] : details) {
    if (!text.empty()) d.push_back(Json::array({label, text}));
  }
  Json s = {{"kind", kind}, {"tone", Tone(outcome)}, {"outcome", std::move(outcome)}, {"title", std::move(title)},
            {"at_ms", at_ms}, {"details", std::move(d)}};
  if (!why.empty()) s["why"] = std::move(why);
  return s;
}

// Why a call was skipped, by the trace's reason code (docs/trace.md, tool.skipped).
std::string SkipWhy(const std::string& reason) {
  if (reason == "truncated") return "an earlier call in the response asks the person to choose first (I2)";
  if (reason == "chain_stopped") return "an earlier call's result stopped the chain (I1)";
  if (reason == "turn_timeout") return "the turn ran out of time";
  if (reason == "turn_failed") return "the turn failed, so the write it queued was withdrawn";
  if (reason == "refused") return "the model refused, so the write the turn queued was withdrawn";
  if (reason == "unrecorded") return "a write whose record could not be stored before it ran: not run";
  return reason;
}

// Why untrusted_data stopped a call, by the violation's kind (docs/trace.md).
std::string ViolationWhy(const std::string& kind) {
  if (kind == "value") return "an argument holds a value only outside data held";
  if (kind == "unrequested") return "outside data is in the session and the person did not ask for this write";
  if (kind == "overflow") return "the session holds more outside data than can be traced";
  return kind;
}

// Where each argument's outside value came from: "recipient: read_file c_1 (turn 3)".
std::string Provenance(const Json& arguments) {
  std::string out;
  if (!arguments.is_object()) return out;
  for (const auto& [arg, sources] : arguments.items()) {
    std::string from;
    for (const Json& s : sources.is_array() ? sources : Json::array()) {
      from += (from.empty() ? "" : ", ") + Str(s, "tool") + " " + Str(s, "call_id") + " (turn " + Str(s, "turn") + ")";
    }
    out += (out.empty() ? "" : "\n") + arg + ": " + from;
  }
  return out;
}

std::string Calls(const Json& calls) {
  std::string out;
  for (const Json& c : calls) {
    if (!out.empty()) out += '\n';  // (a ternary of literals in front of + tripped GCC 12's -Wrestrict at -O3)
    out += Str(c, "name") + "(" + Str(c, "arguments") + ")";
  }
  return out;
}

std::string Tokens(const Json& usage) {
  if (!usage.is_object() || !usage.contains("input_tokens")) return "";
  return Text(usage["input_tokens"]) + " in, " + Text(usage.value("output_tokens", Json(0))) + " out";
}

// A model call and what came back: the response, an error or a refusal.
Json ModelStep(const TraceEvent& call, const TraceEvent* end, int64_t t0) {
  const Json c = call.data.json();
  std::string outcome = "no answer", why;
  Details details = {{"tool choice", StrOr(c, "tool_choice", "auto")}};
  if (c.contains("repeat")) why = "the one repeat of a response cut off (" + Text(c["repeat"]) + ")";
  if (end != nullptr) {
    const Json d = end->data.json();
    details.emplace_back("latency", std::to_string(end->at_ms - call.at_ms) + " ms");
    if (end->type == EventType::kModelResponse) {
      const size_t n = d.value("tool_calls", Json::array()).size();
      outcome = n == 0 ? "answered" : "proposed " + std::to_string(n) + (n == 1 ? " call" : " calls");
      details.emplace_back("tokens", Tokens(d.value("usage", Json())));
      details.emplace_back("proposed", Calls(d.value("tool_calls", Json::array())));
      details.emplace_back("text", Str(d, "text"));
      if (d.contains("finish")) details.emplace_back("finish", Text(d["finish"]));
    } else if (end->type == EventType::kModelError) {
      outcome = "error";
      why = Str(d, "message");
    } else {
      outcome = "refused";
      details.emplace_back("text", Str(d, "text"));
    }
  }
  std::string title = StrOr(c, "purpose", "chat");
  if (c.contains("model")) title += " (" + Str(c, "model") + ")";
  return Step("model", outcome, title, why, call.at_ms - t0, details);
}

Details CallDetails(const Json& d) {
  Details out = {{"arguments", Text(d.value("args", Json()))}};
  if (d.contains("result")) out.emplace_back("result", Text(d["result"]));
  if (d.contains("latency_ms")) out.emplace_back("latency", Text(d["latency_ms"]) + " ms");
  return out;
}

std::string ErrorOf(const Json& d) {
  return Str(d.value("result", Json()), "error");
}

// One event as a step; null for events the timeline folds into another step or leaves
// out (the turn's start and end, reply text, progress).
Json EventStep(const TraceEvent& e, int64_t t0) {
  const Json d = e.data.json();
  if (!d.is_object()) return nullptr;
  const int64_t at = e.at_ms - t0;
  const std::string name = Str(d, "name");
  switch (e.type) {
    case EventType::kToolExecuted: {
      const bool ok = Flag(d, "success");
      std::string why = ok ? "next: " + StrOr(d, "next_action", "continue") : ErrorOf(d);
      Details details = CallDetails(d);
      if (Flag(d, "untrusted")) details.emplace_back("outside data", "its result is someone else's words (trust: untrusted)");
      if (!Str(d, "write_key").empty()) details.emplace_back("write key", Str(d, "write_key"));
      if (Flag(d, "replayed")) {
        return Step("call", ok ? "already done" : "already failed", name,
                    "an earlier try of this turn ran it: its recorded outcome, not run again", at, details);
      }
      if (d.value("attempt", 1) > 1) {
        details.emplace_back("try", Text(d.value("attempt", Json())));
        why = "run again under its key: an earlier try was interrupted. " + why;
      }
      return Step("call", ok ? "executed" : "failed", name, why, at, details);
    }
    case EventType::kWriteUncertain:
      return Step("call", "uncertain", name,
                  "an earlier try of this turn was interrupted while it ran: it may or may not have happened, and its "
                  "backend takes no idempotency key, so it was not run again",
                  at, {{"arguments", Text(d.value("args", Json()))}, {"write key", Str(d, "write_key")}});
    case EventType::kToolRejected:
      return Step("call", "rejected", name, Str(d, "message"), at,
                  {{"reason", Str(d, "reason")}, {"guard", Str(d, "guard")}, {"arguments", Text(d.value("args", Json()))}});
    case EventType::kToolSkipped:
      return Step("call", "skipped", name, SkipWhy(Str(d, "reason")), at, {{"arguments", Text(d.value("args", Json()))}});
    case EventType::kToolDeferred:
      return Step("call", "deferred", name, "a write: it runs after the reply (policy " + Str(d, "policy") + ")", at,
                  {{"arguments", Text(d.value("args", Json()))}, {"the model saw", Str(d, "instruction")},
                   {"idempotency key", Str(d, "idempotency_key")}});
    case EventType::kDeferredExecuted: {
      const bool ok = Flag(d, "success");
      Details details = CallDetails(d);
      details.emplace_back("mode", Str(d, "mode"));
      return Step("call", ok ? "ran after the reply" : "failed after the reply", name, ok ? "" : ErrorOf(d), at, details);
    }
    case EventType::kApprovalRequested:
      return Step("call", "paused", name,
                  Str(d, "reason") == "untrusted_data" ? "needs the person's approval: outside data steered it"
                  : d.contains("condition")            ? "needs the person's approval: " + Str(d, "condition")
                                                       : "needs the person's approval",
                  at, {{"arguments", Text(d.value("args", Json()))}});
    case EventType::kApproval: {
      std::string who;
      for (const Json& a : d.value("approvers", Json::array())) who += (who.empty() ? "" : ", ") + Text(a);
      if (d.contains("requested_by")) who += " (asked by " + Str(d, "requested_by") + ")";
      return Step("approval", "asked", Str(d, "tool"), Str(d, "prompt"), at,
                  {{"reason", Str(d, "reason")}, {"who may answer", who}, {"lapses", Str(d, "expires_at")},
                   {"may change arguments", Flag(d, "allow_edit") ? "yes" : ""},
                   {"may answer always", d.contains("remember") ? "for this session" : ""},
                   {"arguments", Text(d.value("args", Json()))},
                   {"where the values came from", Provenance(d.value("provenance", Json()))}});
    }
    case EventType::kUntrustedViolation:
      return Step("guard", "outside data", name, ViolationWhy(Str(d, "kind")), at,
                  {{"outcome", Str(d, "outcome")}, {"where the values came from", Provenance(d.value("arguments", Json()))},
                   {"arguments", Text(d.value("args", Json()))}});
    case EventType::kUntrustedOverflow:
      return Step("guard", "failed closed", "outside data",
                  "more outside values than untrusted_data.max_identifiers (" + Str(d, "limit") +
                      "): every write in the session needs the person",
                  at, {});
    case EventType::kApprovalGranted:
    case EventType::kApprovalDenied:
    case EventType::kApprovalCancelled:
    case EventType::kApprovalLapsed: {
      const std::string what = e.type == EventType::kApprovalGranted  ? "granted"
                               : e.type == EventType::kApprovalDenied ? "denied"
                               : e.type == EventType::kApprovalLapsed ? "lapsed"
                                                                      : "cancelled";
      std::string why = d.contains("by") ? "by " + Str(d, "by") : "";
      if (e.type == EventType::kApprovalLapsed) why = "no answer by " + Str(d, "expired_at") + ": the call was withdrawn";
      if (const Json edited = d.value("approved_args", Json()); edited.is_object()) {
        // What changed, as it changed: "quantity 180 → 60".
        const Json asked = d.value("args", Json::object());
        std::string changes;
        for (const auto& [name, value] : edited.items()) {
          const Json before = asked.is_object() ? asked.value(name, Json()) : Json();
          if (before == value) continue;
          changes += (changes.empty() ? "" : ", ") + name + " " + (before.is_null() ? "" : Text(before) + " \u2192 ") + Text(value);
        }
        why += ", with " + (changes.empty() ? std::string("changed arguments") : changes);
      }
      if (Flag(d, "remember")) why += ", and for the rest of the session";
      return Step("approval", what, Str(d, "tool"), why, at,
                  {{"arguments", Text(d.value("args", Json()))}, {"approved arguments", Text(d.value("approved_args", Json()))},
                   {"the person said", Str(d, "message")}, {"admitted as", Str(d, "as")}});
    }
    case EventType::kApprovalRemembered:
      return Step("approval", "remembered", Str(d, "tool"), "allowed without asking for the rest of the session, by " + Str(d, "by"),
                  at, {});
    case EventType::kApprovalStanding:
      return Step("approval", "standing", Str(d, "tool"),
                  "ran without asking: " + Str(d, "by") + " allowed it in turn " + Str(d, "granted_turn"), at, {});
    case EventType::kApprovalRevoked:
      return Step("approval", Flag(d, "found") ? "revoked" : "nothing to revoke", Str(d, "tool"),
                  "asks again before each call, by " + Str(d, "by"), at, {});
    case EventType::kClarification: {
      std::string options;
      for (const Json& o : d.value("options", Json::array())) {
        const std::string id = Str(o, "id"), title = Str(o, "title");
        options += (options.empty() ? "" : "\n") + (title.empty() || title == id ? id : id + ": " + title);
      }
      return Step("clarification", "asked", Str(d, "question"), "the person chooses before anything else runs", at,
                  {{"tool", Str(d, "tool")}, {"options", options}});
    }
    case EventType::kClarificationAnswered: {
      std::string about = Str(d, "entity_type");
      const std::string id = Str(d, "option_id"), title = Str(d, "title");
      return Step("clarification", "answered", title.empty() || title == id ? id : title + " (" + id + ")", "", at,
                  {{"about", about.empty() ? Str(d, "tool") : about}});
    }
    case EventType::kClarificationSuperseded:
    case EventType::kClarificationCancelled:
      return Step("clarification", e.type == EventType::kClarificationCancelled ? "cancelled" : "superseded", "", "", at, {});
    case EventType::kLeaseOpened:
    case EventType::kLeaseReleased:
    case EventType::kLeaseExpired: {
      const std::string what = e.type == EventType::kLeaseOpened ? "opened" : e.type == EventType::kLeaseReleased ? "released" : "expired";
      return Step("lease", what, Str(d, "domain"), Str(d, "reason"), at,
                  {{"owner", Str(d, "owner")}, {"expires", Text(d.value("expires_at", Json()))}});
    }
    case EventType::kRailFired:
      return Step("rail", "fired", Str(d, "rail"), "changed the reply", at,
                  {{"before", Str(d, "before")}, {"after", Str(d, "after")}});
    case EventType::kHonestClaimsCorrected:
      return Step("rail", "corrected", "honest_claims", "a claim about " + Str(d, "tool") + ", which did not succeed", at, {});
    case EventType::kAudit:
      return Step("audit", Str(d, "repair"), "", Str(d, "reason"), at,
                  {{"verdict", Text(d.value("verdict", Json()))}, {"missing", Text(d.value("missing", Json()))},
                   {"unknown UI", Text(d.value("unknown_ui", Json()))}, {"error", Str(d, "error")}});
    case EventType::kAuditError:
      return Step("audit", "invalid verdict", "", Str(d, "error"), at, {{"attempt", Text(d.value("attempt", Json()))}});
    case EventType::kNoticeCreated:
      return Step("notice", "for the next reply", Str(d, "tool"), Str(d, "text"), at, {});
    case EventType::kNotice:
      return Step("notice", "delivered", "", Str(d, "text"), at, {});
    case EventType::kDeferredNote: {  // the failure notes appended to the reply
      std::string notes;
      for (const Json& n : d.value("text", Json::array())) notes += (notes.empty() ? "" : " ") + Text(n);
      return Step("notice", "in the reply", "", notes, at, {});
    }
    case EventType::kSafetyOverride:
      return Step("guard", "safety override", Str(d, "flag_tool"), "the person's words matched a safety pattern: no model call", at,
                  {{"pattern", Str(d, "pattern")}});
    case EventType::kTurnBlocked:
      return Step("guard", "blocked", "turn", Str(d, "reason"), at, {});
    case EventType::kModelCallsIgnored:
      return Step("guard", "calls ignored", "model", Str(d, "reason"), at, {{"calls", Calls(d.value("tool_calls", Json::array()))}});
    case EventType::kActRetry:
      return Step("guard", "retry forced", Str(d, "tool"), "the model described the action instead of calling the tool", at,
                  {{"sentence", Str(d, "sentence")}, {"mode", Str(d, "mode")}});
    case EventType::kActMissing:
      return Step("guard", "action not done", Str(d, "tool"), "the sentence was taken out (" + Str(d, "reason") + ")", at,
                  {{"sentence", Str(d, "sentence")}});
    case EventType::kIntentMissing:
      return Step("guard", "intent missing", Str(d, "intent"), "a required tool was not called", at,
                  {{"missing", Text(d.value("missing", Json()))}, {"enforcement", Str(d, "enforcement")}});
    case EventType::kPlan:
      return Step("plan", "planned", "plan", "", at, {{"steps", Text(d.value("steps", Json()))}});
    case EventType::kPlanInvalid:
    case EventType::kPlanFallback:
    case EventType::kPlanResumed:
    case EventType::kPlanAbandoned:
    case EventType::kPlanStepRetry:
    case EventType::kPlanStepFinished: {
      std::string title = d.contains("step") ? "step " + Text(d["step"]) : "plan";
      return Step("plan", std::string(e.name()).substr(5), title, Text(d.value("reason", d.value("error", Json()))), at,
                  {{"status", Text(d.value("status", Json()))}, {"missing", Text(d.value("missing", Json()))}});
    }
    case EventType::kTurnFailed:
      return Step("error", "turn failed", "turn", Str(d, "error"), at, {});
    case EventType::kTurnCancelled:
      return Step("error", "cancelled", "turn", "by " + Str(d, "speaker"), at, {});
    default:
      return nullptr;
  }
}

}  // namespace

std::string SaidText(const Json& input) {
  if (!input.is_object()) return "";
  if (input.contains("say") && input["say"].is_string()) return input["say"].get<std::string>();
  // The words a person typed that the OpenAI door read as a choice or a decision.
  const std::string words = input.contains("words") && input["words"].is_string() ? "\"" + Str(input, "words") + "\" " : "";
  if (input.contains("select") && input["select"].is_string()) return words + "(chose " + Str(input, "select") + ")";
  if (input.contains("approve") && input["approve"].is_boolean()) {
    return words + (input["approve"].get<bool>() ? "(approved)" : "(declined)");
  }
  if (input.contains("approve") && input["approve"].is_object()) {
    const Json& a = input["approve"];
    std::string said = Flag(a, "decision") ? "(approved" : "(declined";
    if (a.contains("args") && a["args"].is_object()) {
      std::string changes;
      for (const auto& [name, value] : a["args"].items()) changes += (changes.empty() ? "" : ", ") + name + " " + Text(value);
      said += " with " + changes;
    }
    if (Flag(a, "remember")) said += ", for the rest of the session";
    said += ")";
    if (a.contains("message")) said += " " + Str(a, "message");
    return said;
  }
  if (input.contains("revoke")) return "(revoked the standing permission for " + Str(input, "revoke") + ")";
  return Flag(input, "cancel") ? "(cancelled)" : "";
}

Json TurnTimeline(const TimelineTurn& turn) {
  Json steps = Json::array();
  const std::vector<TraceEvent> none;
  const std::vector<TraceEvent>& events = turn.events != nullptr ? *turn.events : none;
  const int64_t t0 = events.empty() ? 0 : events.front().at_ms;
  std::set<std::string> ran_after;  // idempotency keys of deferred calls that ran
  for (const TraceEvent& e : events) {
    if (e.type == EventType::kDeferredExecuted) ran_after.insert(Str(e.data.json(), "idempotency_key"));
  }
  for (size_t i = 0; i < events.size(); ++i) {
    const TraceEvent& e = events[i];
    if (e.type == EventType::kModelCall && e.data.is_object()) {
      const TraceEvent* end = nullptr;
      for (size_t k = i + 1; k < events.size() && end == nullptr; ++k) {
        const EventType t = events[k].type;
        const bool answer = t == EventType::kModelResponse || t == EventType::kModelError || t == EventType::kModelRefusal;
        if (answer && events[k].data.is_object()) end = &events[k];
        if (t == EventType::kModelCall) break;
      }
      steps.push_back(ModelStep(e, end, t0));
      continue;
    }
    Json step = EventStep(e, t0);
    if (step.is_null()) continue;
    // A write that has not run yet (a background one) waits in the outbox.
    if (e.type == EventType::kToolDeferred && !ran_after.contains(Str(e.data.json(), "idempotency_key"))) {
      step["outcome"] = "queued";
      step["tone"] = Tone("queued");
      step["why"] = "waits in the outbox to run after the reply";
    }
    steps.push_back(std::move(step));
  }
  return {{"turn", turn.number}, {"speaker", turn.speaker}, {"said", turn.said}, {"status", turn.status},
          {"reply", turn.reply}, {"steps", std::move(steps)}};
}

}  // namespace reins
