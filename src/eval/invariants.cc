#include "eval/invariants.h"

#include <map>
#include <set>

#include "core/json_path.h"
#include "policy/schema/schema_validator.h"

namespace reins {
namespace {

bool IsToolEvent(const TraceEvent& e) {
  return e.type == "tool.executed" || e.type == "tool.rejected" || e.type == "tool.skipped" || e.type == "tool.deferred";
}

bool StoppingResult(const TraceEvent& e) {
  return e.type == "tool.executed" && (!e.data.value("success", true) || e.data.value("next_action", "continue") != "continue");
}

std::string Describe(const TraceEvent& e) {
  return e.type + " " + e.data.value("name", "") + " (response " + std::to_string(e.data.value("response", 0)) +
         ", position " + std::to_string(e.data.value("position", 0)) + ")";
}

// I1: nothing executes after a stopping result in the same response; a clarification
// ends the turn's model calls; `complete` is followed by exactly one tools-off call.
void CheckStop(const TurnRun& t, std::vector<InvariantViolation>& out) {
  const auto& events = t.result.events;
  for (size_t i = 0; i < events.size(); ++i) {
    if (!StoppingResult(events[i])) continue;
    int response = events[i].data.value("response", 0);
    std::string action = events[i].data.value("next_action", "");
    int model_calls_after = 0;
    std::string first_choice;
    for (size_t j = i + 1; j < events.size(); ++j) {
      const TraceEvent& e = events[j];
      if (e.type == "tool.executed" && e.data.value("response", 0) == response) {
        out.push_back({"I1", t.number, Describe(e) + " ran after the stopping result of " + Describe(events[i])});
      }
      if (e.type == "model.call") {
        if (model_calls_after++ == 0) first_choice = e.data.value("tool_choice", "");
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
      if (model_calls_after != 1 || first_choice != "none") {
        out.push_back({"I1", t.number, "after complete: " + std::to_string(model_calls_after) +
                                           " model calls (first with tool choice '" + first_choice +
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
      out.push_back({"I2", t.number, Describe(e) + " ran in the same response after a may_clarify tool"});
    }
    if (tool != nullptr && tool->may_clarify && it == clarifier_position.end()) clarifier_position[response] = position;
  }
}

// I3: consumed entity ids come from earlier results or the user's choice; after a
// choice, only the chosen id for the rest of that turn.
void CheckProvenance(const AgentConfig& config, const std::vector<TurnRun>& turns, std::vector<InvariantViolation>& out) {
  std::map<std::string, std::set<std::string>> produced;
  for (const TurnRun& t : turns) {
    std::map<std::string, std::string> chosen;
    for (const TraceEvent& e : t.result.events) {
      if (e.type == "clarification.answered") {
        std::string type = e.data.value("entity_type", ""), id = e.data.value("option_id", "");
        if (!type.empty()) {
          chosen[type] = id;
          produced[type].insert(id);
        }
        continue;
      }
      if (e.type != "tool.executed") continue;
      const ToolDef* tool = config.FindTool(e.data.value("name", ""));
      if (tool == nullptr) continue;
      const Json& args = e.data["args"];
      for (const auto& [arg, type] : tool->consumes) {
        if (!args.is_object() || !args.contains(arg)) continue;
        std::string id = args[arg].is_string() ? args[arg].get<std::string>() : args[arg].dump();
        if (chosen.count(type) && chosen[type] != id) {
          out.push_back({"I3", t.number, Describe(e) + ": " + arg + " = '" + id + "' but the user chose '" + chosen[type] + "'"});
        } else if (!chosen.count(type) && !produced[type].count(id)) {
          out.push_back({"I3", t.number, Describe(e) + ": " + arg + " = '" + id + "' was never produced by a tool result"});
        }
      }
      if (!e.data.value("success", false)) continue;
      for (const auto& [type, path_text] : tool->produces) {
        auto path = JsonPath::Parse(path_text);
        if (!path.ok()) continue;
        for (const Json* v : path->Select(e.data["result"])) {
          if (v->is_string()) produced[type].insert(v->get<std::string>());
          else if (v->is_number_integer()) produced[type].insert(v->dump());
        }
      }
    }
  }
}

// I10: every tool call in history is answered by exactly one tool message, in order,
// right after the assistant message that made it; no tool message answers nothing.
void CheckPairing(const std::vector<Message>& history, std::vector<InvariantViolation>& out) {
  for (size_t i = 0; i < history.size(); ++i) {
    const Message& m = history[i];
    if (m.role == Role::kTool) {
      out.push_back({"I10", 0, "history message " + std::to_string(i) + " is a tool result with no call before it"});
      continue;
    }
    if (m.role != Role::kAssistant || m.tool_calls.empty()) continue;
    for (size_t k = 0; k < m.tool_calls.size(); ++k) {
      size_t at = i + 1 + k;
      if (at >= history.size() || history[at].role != Role::kTool || history[at].tool_call_id != m.tool_calls[k].id) {
        out.push_back({"I10", 0, "tool call " + m.tool_calls[k].id + " (" + m.tool_calls[k].name +
                                     ") is not answered in order right after its assistant message"});
      }
    }
    i += m.tool_calls.size();
  }
}

// I11: every executed call's arguments validate against the tool's input schema.
void CheckSchema(const AgentConfig& config, const TurnRun& t, std::vector<InvariantViolation>& out) {
  for (const TraceEvent& e : t.result.events) {
    if (e.type != "tool.executed") continue;
    const ToolDef* tool = config.FindTool(e.data.value("name", ""));
    if (tool == nullptr) {
      out.push_back({"I11", t.number, Describe(e) + ": executed a tool the agent does not define"});
      continue;
    }
    auto validator = SchemaValidator::Compile(tool->input_schema);
    if (!validator.ok()) continue;
    for (const std::string& problem : validator->Validate(e.data["args"])) {
      out.push_back({"I11", t.number, Describe(e) + ": arguments break the schema: " + problem});
    }
  }
}

}  // namespace

const std::vector<std::string>& CheckedInvariants() {
  static const std::vector<std::string> kIds = {"I1", "I2", "I3", "I10", "I11"};
  return kIds;
}

std::vector<InvariantViolation> CheckInvariants(const AgentConfig& config, const std::vector<TurnRun>& turns,
                                                const std::vector<Message>& history) {
  std::vector<InvariantViolation> out;
  for (const TurnRun& t : turns) {
    CheckStop(t, out);
    CheckTruncate(config, t, out);
    CheckSchema(config, t, out);
  }
  CheckProvenance(config, turns, out);
  CheckPairing(history, out);
  return out;
}

}  // namespace reins
