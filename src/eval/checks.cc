#include "eval/checks.h"

#include <algorithm>
#include <cctype>

#include <re2/re2.h>

#include "domain/text.h"
#include "tools/fixture_backend.h"

namespace reins {
namespace {

std::vector<std::string> Strings(const Json& v) {
  if (v.is_string()) return {v.get<std::string>()};
  std::vector<std::string> out;
  if (v.is_array()) {
    for (const Json& x : v) {
      if (x.is_string()) out.push_back(x.get<std::string>());
    }
  }
  return out;
}

std::string Quote(const std::string& s) {
  return "\"" + Clipped(s, 120) + "\"";
}

// All outcomes with `status` among the given turns.
std::vector<const ToolOutcome*> Outcomes(const std::vector<const TurnRun*>& turns, ToolOutcome::Status status) {
  std::vector<const ToolOutcome*> out;
  for (const TurnRun* t : turns) {
    for (const ToolOutcome& o : t->result.tools) {
      if (o.status == status) out.push_back(&o);
    }
  }
  return out;
}

// Calls that really ran: executed in the loop, or deferred and run after the reply.
std::vector<const ToolOutcome*> Ran(const std::vector<const TurnRun*>& turns, bool deferred_only) {
  std::vector<const ToolOutcome*> out;
  for (const TurnRun* t : turns) {
    for (const ToolOutcome& o : t->result.tools) {
      bool ran_deferred = o.status == ToolOutcome::Status::kDeferred && o.result.has_value();
      if (ran_deferred || (!deferred_only && o.status == ToolOutcome::Status::kExecuted)) out.push_back(&o);
    }
  }
  return out;
}

std::string Names(const std::vector<const ToolOutcome*>& outcomes) {
  std::string s;
  for (const ToolOutcome* o : outcomes) s += (s.empty() ? "" : ", ") + o->name;
  return s.empty() ? "none" : s;
}

// Each item (a name, or {name, args}) must match one of `outcomes`.
bool AllMatch(const Json& items, const std::vector<const ToolOutcome*>& outcomes, std::string* missing) {
  Json list = items.is_array() ? items : Json::array({items});
  for (const Json& item : list) {
    std::string name = item.is_string() ? item.get<std::string>() : item.value("name", "");
    bool with_args = item.is_object() && item.contains("args");
    bool found = std::any_of(outcomes.begin(), outcomes.end(), [&](const ToolOutcome* o) {
      return o->name == name && (!with_args || JsonSubsetMatch(item["args"], o->args));
    });
    if (!found) {
      *missing = item.dump();
      return false;
    }
  }
  return true;
}

bool MatchesRegex(const std::string& pattern, const std::string& text) {
  RE2 re(pattern, RE2::Quiet);
  return re.ok() && RE2::PartialMatch(text, re);
}

CheckResult Evaluate(const Check& check, const std::vector<const TurnRun*>& turns, bool whole) {
  CheckResult r{check.kind, check.value, false, "", check.dimension, check.critical};
  const TurnRun& last = *turns.back();
  std::vector<std::string> replies;
  for (const TurnRun* t : turns) replies.push_back(t->result.reply);
  const std::string& k = check.kind;
  const Json& v = check.value;
  const std::string pattern = v.is_string() ? v.get<std::string>() : "";

  if (k == "status") {
    std::string seen = last.refused ? "refused" : std::string(TurnStatusName(last.result.status));
    r.passed = v.is_string() && seen == v.get<std::string>();
    r.detail = "status was " + seen + (last.result.error.empty() ? "" : " (" + last.result.error + ")");
  } else if (k == "reply_contains" || k == "reply_not_contains") {
    bool want = k == "reply_contains";
    r.passed = true;
    for (const std::string& needle : Strings(v)) {
      bool any = std::any_of(replies.begin(), replies.end(),
                             [&](const std::string& reply) { return AsciiLower(reply).find(AsciiLower(needle)) != std::string::npos; });
      if (any != want) {
        r.passed = false;
        r.detail = (want ? "missing " : "found ") + Quote(needle) + " in reply " + Quote(last.result.reply);
      }
    }
  } else if (k == "reply_matches" || k == "reply_not_matches") {
    bool any = std::any_of(replies.begin(), replies.end(), [&](const std::string& reply) { return MatchesRegex(pattern, reply); });
    r.passed = any == (k == "reply_matches");
    r.detail = "reply was " + Quote(last.result.reply);
  } else if (k == "first_sentence_matches" || k == "first_sentence_not_matches") {
    std::string first = FirstSentence(last.result.reply);
    r.passed = MatchesRegex(pattern, first) == (k == "first_sentence_matches");
    r.detail = "first sentence was " + Quote(first);
  } else if (k == "tools_executed" || k == "tools_deferred") {
    std::string missing;
    auto ran = Ran(turns, k == "tools_deferred");
    r.passed = AllMatch(v, ran, &missing);
    r.detail = "did not run: " + missing + "; ran: " + Names(ran);
  } else if (k == "tools_not_executed") {
    auto executed = Ran(turns, false);
    r.passed = true;
    for (const Json& item : v.is_array() ? v : Json::array({v})) {
      std::string unused;
      if (AllMatch(item, executed, &unused)) {
        r.passed = false;
        r.detail = "executed " + item.dump() + "; ";
      }
    }
    r.detail += "executed: " + Names(executed);
  } else if (k == "tools_rejected" || k == "tools_skipped") {
    auto status = k == "tools_rejected" ? ToolOutcome::Status::kRejected : ToolOutcome::Status::kSkipped;
    auto seen = Outcomes(turns, status);
    std::string missing;
    r.passed = AllMatch(v, seen, &missing);
    r.detail = "missing " + missing + "; seen: " + Names(seen);
  } else if (k == "clarification") {
    const auto& c = last.result.clarification;
    if (v.is_string() && v.get<std::string>() == "none") {
      r.passed = !c;
      r.detail = c ? "a clarification is pending: " + Quote(c->clarification.question) : "";
    } else if (!c) {
      r.detail = "no clarification is pending";
    } else {
      r.passed = true;
      if (v.contains("options") && static_cast<int>(c->clarification.options.size()) != v["options"].get<int>()) {
        r.passed = false;
        r.detail = std::to_string(c->clarification.options.size()) + " options";
      }
      if (v.contains("question_contains") &&
          AsciiLower(c->clarification.question).find(AsciiLower(v["question_contains"].get<std::string>())) == std::string::npos) {
        r.passed = false;
        r.detail = "question was " + Quote(c->clarification.question);
      }
    }
  } else if (k == "model_calls") {
    int calls = 0;
    for (const TurnRun* t : turns) calls += t->result.model_calls;
    if (v.is_number_integer()) r.passed = calls == v.get<int>();
    else if (v.is_object() && v.contains("max")) r.passed = calls <= v["max"].get<int>();
    r.detail = std::to_string(calls) + " model calls";
  } else if (k == "rails_fired") {
    std::vector<std::string> want = Strings(v), seen;
    for (const TurnRun* t : turns) seen.insert(seen.end(), t->result.rails.begin(), t->result.rails.end());
    std::sort(want.begin(), want.end());
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    r.passed = v.is_array() && want == seen;
    std::string list;
    for (const std::string& x : seen) list += (list.empty() ? "" : ", ") + x;
    r.detail = "rails fired: " + (list.empty() ? "none" : list);
  } else if (k == "notice_contains") {
    // A notice this turn's deferred calls created, or one its reply carried.
    std::vector<std::string> notices;
    for (const TurnRun* t : turns) {
      notices.insert(notices.end(), t->result.notices.begin(), t->result.notices.end());
      for (const TraceEvent& e : t->result.events) {
        if (e.type == "notice.created") notices.push_back(e.data.value("text", ""));
      }
    }
    r.passed = std::any_of(notices.begin(), notices.end(),
                           [&](const std::string& n) { return AsciiLower(n).find(AsciiLower(pattern)) != std::string::npos; });
    r.detail = std::to_string(notices.size()) + " notices";
  } else if (k == "plan") {
    const std::vector<PlanStep>& steps = last.result.plan;
    std::vector<std::string> statuses;
    for (const PlanStep& st : steps) statuses.emplace_back(kStepStatuses.Name(st.status));
    r.passed = v.is_object() && !steps.empty();
    if (v.contains("steps") && static_cast<int>(steps.size()) != v["steps"].get<int>()) r.passed = false;
    if (v.contains("statuses") && Strings(v["statuses"]) != statuses) r.passed = false;
    std::string seen;
    for (const std::string& st : statuses) seen += (seen.empty() ? "" : ", ") + st;
    r.detail = std::to_string(steps.size()) + " steps: " + (seen.empty() ? "none" : seen);
  } else if (k == "audit") {
    const Json& audit = last.result.audit;
    r.passed = !audit.is_null() && (!v.is_object() || v.value("repair", audit.value("repair", "")) == audit.value("repair", ""));
    r.detail = audit.is_null() ? "no audit ran" : "repair was " + audit.value("repair", "");
  } else if (k == "approval") {
    // {tool?, reason?: policy|condition|untrusted_data, prompt_contains?} (SCENARIOS.md), or
    // none (docs/scenarios.md)
    const auto& a = last.result.approval;
    const bool none = v.is_string() && v.get<std::string>() == "none";
    r.passed = a.has_value() != none;
    r.detail = none ? "" : "no approval is pending";
    if (a) {
      const std::string reason(kApprovalReasons.Name(a->reason));
      r.detail = "approval pending for " + a->tool + " (" + reason + "): " + Quote(a->prompt);
      if (none) r.passed = false;
      if (v.is_object()) {
        const bool prompt_ok = !v.contains("prompt_contains") ||
                               AsciiLower(a->prompt).find(AsciiLower(v["prompt_contains"].get<std::string>())) != std::string::npos;
        r.passed = v.value("tool", a->tool) == a->tool && v.value("reason", reason) == reason && prompt_ok;
      }
    }
  } else if (k == "lease") {
    const HeapOptional<Lease>& lease = last.result.lease;
    if (v.is_string() && v.get<std::string>() == "none") {
      r.passed = !lease.has_value();
    } else if (v.is_object() && lease) {
      r.passed = v.value("owner", lease->owner) == lease->owner && v.value("domain", lease->domain) == lease->domain;
    }
    r.detail = lease ? "lease held by " + lease->owner + " (" + lease->domain + ")" : "no lease";
  } else if (k == "error_contains") {
    std::string error = last.refused ? last.refusal : last.result.error;
    r.passed = v.is_string() && AsciiLower(error).find(AsciiLower(v.get<std::string>())) != std::string::npos;
    r.detail = "error was " + Quote(error);
  } else if (k == "invocations" && whole) {
    auto executed = Ran(turns, false);
    r.passed = v.is_object();
    for (const auto& item : v.items()) {
      const std::string& tool = item.key();
      const Json& count = item.value();
      int seen = static_cast<int>(std::count_if(executed.begin(), executed.end(), [&](const ToolOutcome* o) { return o->name == tool; }));
      if (!count.is_number_integer() || seen != count.get<int>()) {
        r.passed = false;
        r.detail += tool + " executed " + std::to_string(seen) + " times; ";
      }
    }
  } else {
    r.detail = "unknown check '" + k + "'";  // the loader refuses these; kept so none passes
  }
  if (r.passed) r.detail.clear();
  return r;
}

}  // namespace

std::string FirstSentence(const std::string& reply) {
  std::vector<std::string> sentences = Sentences(reply);
  if (sentences.empty()) return "";
  std::string first = std::move(sentences.front());
  if (!first.empty() && first.back() == '\n') first.pop_back();
  return first;
}

CheckResult EvaluateTurnCheck(const Check& check, const TurnRun& turn) { return Evaluate(check, {&turn}, false); }

CheckResult EvaluateFinalCheck(const Check& check, const std::vector<TurnRun>& turns) {
  std::vector<const TurnRun*> all;
  for (const TurnRun& t : turns) all.push_back(&t);
  if (all.empty()) return {check.kind, check.value, false, "no turns ran", check.dimension, check.critical};
  return Evaluate(check, all, true);
}

}  // namespace reins
