#include "eval/turn_invariants.h"

#include <map>

#include "schema/schema_validator.h"

namespace reins {
namespace {

bool IsToolEvent(const TraceEvent& e) {
  return e.type == "tool.executed" || e.type == "tool.rejected" || e.type == "tool.skipped" || e.type == "tool.deferred";
}

bool StoppingResult(const TraceEvent& e) {
  return e.type == "tool.executed" && (!e.data.value("success", true) || e.data.value("next_action", "continue") != "continue");
}

// I1: nothing executes after a stopping result in the same response; a clarification
// ends the turn's model calls; `complete` is followed by exactly one tools-off call of
// the loop it happened in, which then ends. Loop calls are chat, step and gather calls
// (the tools-off call of a gather round or of a replayed call is a chat call); the audit
// judging the answer (audit, rewrite) is not the loop, and the loop is over when its
// plan step finishes or the audit starts a repair (a gather round is a loop of its own).
bool IsLoopCall(const TraceEvent& e) {
  const std::string purpose = e.data.value("purpose", "");
  return purpose.empty() || purpose == "chat" || purpose == "step" || purpose == "gather";
}

}  // namespace

std::string DescribeCall(const TraceEvent& e) {
  return std::string(e.name()) + " " + e.data.value("name", "") + " (response " + std::to_string(e.data.value("response", 0)) +
         ", position " + std::to_string(e.data.value("position", 0)) + ")";
}

void CheckStop(const TurnRun& t, std::vector<InvariantViolation>& out) {
  const auto& events = t.result.events;
  for (size_t i = 0; i < events.size(); ++i) {
    if (!StoppingResult(events[i])) continue;
    int response = events[i].data.value("response", 0);
    std::string action = events[i].data.value("next_action", "");
    int model_calls_after = 0, loop_calls_after = 0;
    std::string first_choice;
    bool loop_over = false;
    for (size_t j = i + 1; j < events.size(); ++j) {
      const TraceEvent& e = events[j];
      if (e.type == "tool.executed" && e.data.value("response", 0) == response) {
        out.push_back({"I1", t.number, DescribeCall(e) + " ran after the stopping result of " + DescribeCall(events[i])});
      }
      if (e.type == "plan.step.finished" || e.type == "audit") loop_over = true;
      if (e.type == "model.call" && !e.data.contains("repeat")) {  // a repeat is the same call again (I9)
        ++model_calls_after;
        if (loop_over || !IsLoopCall(e)) continue;
        if (loop_calls_after++ == 0) first_choice = e.data.value("tool_choice", "");
      }
    }
    if (action == "clarification_needed") {
      if (model_calls_after > 0) out.push_back({"I1", t.number, "a model call happened after clarification_needed"});
      if (t.result.status != TurnStatus::kAwaitingClarification) {
        out.push_back({"I1", t.number, "turn status is " + std::string(TurnStatusName(t.result.status)) +
                                           " after clarification_needed"});
      }
    }
    if (action == "complete" && events[i].data.value("success", false)) {
      if (loop_calls_after != 1 || first_choice != "none") {
        out.push_back({"I1", t.number, "after complete: " + std::to_string(loop_calls_after) +
                                           " loop calls (first with tool choice '" + first_choice +
                                           "'), expected exactly one with tool choice none"});
      }
    }
  }
}

// I2: after a may_clarify call in a response, later calls of that response do not run.
void CheckTruncate(const AgentConfig& config, const TurnRun& t, std::vector<InvariantViolation>& out) {
  std::map<int, int> clarifier_position;  // response -> first may_clarify position
  for (const TraceEvent& e : t.result.events) {
    if (!IsToolEvent(e)) continue;
    const ToolDef* tool = config.FindTool(e.data.value("name", ""));
    int response = e.data.value("response", 0), position = e.data.value("position", 0);
    auto it = clarifier_position.find(response);
    if (it != clarifier_position.end() && position > it->second && e.type == "tool.executed") {
      out.push_back({"I2", t.number, DescribeCall(e) + " ran in the same response after a may_clarify tool"});
    }
    if (tool != nullptr && tool->may_clarify && it == clarifier_position.end()) clarifier_position[response] = position;
  }
}

// I9: model calls stay bounded: the loop within limits.max_rounds plus its extras (one
// tools-off call after `complete`, forced retries, one repeat of a cut-off response), at
// most two plan calls and one synthesis; and the turn reaches its reply within
// limits.turn_timeout_ms.
void CheckBounded(const AgentConfig& config, const TurnRun& t, std::vector<InvariantViolation>& out) {
  int loop = 0, plan = 0, forced = 0, completes = 0, audit = 0, rewrite = 0, gather = 0, repeats = 0;
  for (const TraceEvent& e : t.result.events) {
    if (e.type == "model.call" && e.data.contains("repeat")) {
      ++repeats;  // the one repeat of a response cut off by the token limit (or paused)
      continue;
    }
    if (e.type == "model.call") {
      std::string purpose = e.data.value("purpose", "");
      if (purpose == "plan") ++plan;
      else if (purpose == "chat" || purpose == "step") ++loop;
      else if (purpose == "audit") ++audit;
      else if (purpose == "rewrite") ++rewrite;
      else if (purpose == "gather") ++gather;
    }
    if (e.type == "plan.step.retry" || e.type == "act.retry" || (e.type == "intent.missing" && e.data.value("retry", false))) {
      ++forced;
    }
    if (e.type == "tool.executed" && e.data.value("next_action", "") == "complete") ++completes;
  }
  // One synthesis after a plan, and one after an audit's gather round.
  int synthesis = (t.result.plan.empty() ? 0 : 1) + (gather > 0 ? 1 : 0);
  int bound = config.max_rounds + completes + synthesis;
  if (repeats > 1) out.push_back({"I9", t.number, std::to_string(repeats) + " repeats of a cut-off response (bound 1)"});
  if (config.turn_timeout_ms > 0 && !t.result.events.empty()) {
    // Up to its reply (or its failure): deferred calls after it keep their own budget.
    int64_t answered = t.result.events.back().at_ms;
    for (const TraceEvent& e : t.result.events) {
      if (e.type == "reply.final" || e.type == "turn.failed" || e.type == "clarification" || e.type == "approval") {
        answered = e.at_ms;
        break;
      }
    }
    // Slack for the moment a cancelled call takes to unwind in real time.
    constexpr int64_t kSlackMs = 250;
    if (answered - t.result.events.front().at_ms > config.turn_timeout_ms + kSlackMs) {
      out.push_back({"I9", t.number, "the turn took " + std::to_string(answered - t.result.events.front().at_ms) +
                                         " ms to its reply (limits.turn_timeout_ms " +
                                         std::to_string(config.turn_timeout_ms) + ")"});
    }
  }
  if (audit > 2 || rewrite > 1 || gather > 1) {
    out.push_back({"I9", t.number, std::to_string(audit) + " audit, " + std::to_string(rewrite) + " rewrite and " +
                                       std::to_string(gather) + " gather calls (bounds 2, 1, 1)"});
  }
  if (loop > bound || plan > 2) {
    out.push_back({"I9", t.number, std::to_string(loop) + " loop calls (bound " + std::to_string(bound) + ") and " +
                                       std::to_string(plan) + " plan calls (bound 2); " + std::to_string(forced) +
                                       " forced retries"});
  }
}

// I11: every executed call's arguments validate against the tool's input schema.
void CheckSchema(const AgentConfig& config, const TurnRun& t, std::vector<InvariantViolation>& out) {
  for (const TraceEvent& e : t.result.events) {
    if (e.type != "tool.executed") continue;
    Json d = e.data.json();  // not const: a missing member reads as null
    const ToolDef* tool = config.FindTool(d.value("name", ""));
    if (tool == nullptr) {
      out.push_back({"I11", t.number, DescribeCall(e) + ": executed a tool the agent does not define"});
      continue;
    }
    auto validator = SchemaValidator::Compile(tool->input_schema);
    if (!validator.ok()) continue;
    for (const std::string& problem : validator->Validate(d["args"])) {
      out.push_back({"I11", t.number, DescribeCall(e) + ": arguments break the schema: " + problem});
    }
  }
}

std::set<std::string> WithdrawnCalls(const TurnRun& t, const char* field) {
  std::set<std::string> out;
  for (const TraceEvent& e : t.result.events) {
    const std::string reason = e.type == "tool.skipped" ? e.data.value("reason", "") : "";
    if (reason == "turn_failed" || reason == "refused") out.insert(e.data.value(field, ""));
  }
  return out;
}

// I4: a deferred call runs only after the reply is final, and the model saw only the
// synthetic instruction in its place.
void CheckDeferral(const AgentConfig& config, const TurnRun& t, const std::vector<Message>& history,
                   std::vector<InvariantViolation>& out) {
  const std::set<std::string> withdrawn = WithdrawnCalls(t, "call_id");
  bool reply_final = false;
  for (const TraceEvent& e : t.result.events) {
    // The turn's last word: its reply, or the question or approval request it ends with.
    if (e.type == "reply.final" || e.type == "clarification" || e.type == "approval") reply_final = true;
    if (e.type == "deferred.executed" && !reply_final) {
      out.push_back({"I4", t.number, "deferred " + e.data.value("name", "") + " ran before the reply was final"});
    }
    if (e.type == "tool.executed") {
      const ToolDef* tool = config.FindTool(e.data.value("name", ""));
      if (tool != nullptr && tool->timing == ToolTiming::kDeferred) {
        out.push_back({"I4", t.number, DescribeCall(e) + ": a deferred tool ran inside the loop, so the model saw its result"});
      }
    }
    if (e.type != "tool.deferred") continue;
    const ToolDef* tool = config.FindTool(e.data.value("name", ""));
    std::string call_id = e.data.value("call_id", "");
    if (withdrawn.contains(call_id)) continue;  // its history entry now says it did not run
    for (const Message& m : history) {
      if (m.role != Role::kTool || m.tool_call_id != call_id || tool == nullptr) continue;
      if (m.text != tool->deferred_instruction) {
        out.push_back({"I4", t.number, "the model saw \"" + m.text.substr(0, 60) + "\" for deferred " + tool->name +
                                           " instead of its deferred_instruction"});
      }
    }
  }
}

// I5: a failed deferred call's failure note reaches the person: on this turn's reply
// (await) or as a notice (background, or past the await budget).
void CheckHonesty(const AgentConfig& config, const TurnRun& t, std::vector<InvariantViolation>& out) {
  for (const TraceEvent& e : t.result.events) {
    if (e.type != "deferred.executed" || e.data.value("success", true)) continue;
    const ToolDef* tool = config.FindTool(e.data.value("name", ""));
    std::string note = tool != nullptr ? tool->failure_note : "";
    bool told = !note.empty() && t.result.reply.find(note) != std::string::npos;
    for (const TraceEvent& n : t.result.events) {
      if (n.type == "notice.created" && n.data.value("text", "") == note) told = true;
    }
    if (!told) out.push_back({"I5", t.number, "deferred " + e.data.value("name", "") + " failed and its failure note reached nobody"});
  }
}

}  // namespace reins
