#include "eval/invariants.h"

#include <algorithm>
#include <map>
#include <set>

#include "domain/json_path.h"
#include "eval/outside_data_check.h"
#include "eval/turn_invariants.h"
#include "policy/approval/approval_rules.h"
#include "reins/clock.h"

namespace reins {
namespace {

// I3: consumed entity ids come from earlier results or the user's choice; after a
// choice, only the chosen id for the rest of that turn, and the candidates the person
// did not choose stay refused in later turns until a result produces them again. A
// scoped id (entities.belongs_to) was listed for the owner the call pairs it with.
void CheckProvenance(const AgentConfig& config, const std::vector<TurnRun>& turns, std::vector<InvariantViolation>& out) {
  std::map<std::string, std::set<std::string>> produced;
  std::map<std::string, std::map<std::string, std::set<std::string>>> owners;  // type -> id -> owners
  std::map<std::string, std::map<std::string, int>> turned_down;              // type -> id -> turn
  std::map<std::string, std::vector<std::string>> offered;                    // type -> last options shown
  for (const TurnRun& t : turns) {
    std::map<std::string, std::string> chosen;
    for (const TraceEvent& e : t.result.events) {
      if (e.type == "clarification") {
        std::vector<std::string> ids;
        for (const Json& o : e.data.value("options", Json::array())) {
          if (o.is_object() && o.contains("id")) ids.push_back(o["id"].is_string() ? o["id"].get<std::string>() : o["id"].dump());
        }
        offered[e.data.value("entity_type", "")] = std::move(ids);
        continue;
      }
      if (e.type == "clarification.answered") {
        std::string type = e.data.value("entity_type", ""), id = e.data.value("option_id", "");
        if (!type.empty()) {
          chosen[type] = id;
          produced[type].insert(id);
          for (const std::string& other : offered[type]) {
            if (other != id) turned_down[type][other] = t.number;
          }
          turned_down[type].erase(id);
        }
        continue;
      }
      // A deferred write was accepted when it was queued: its ids are judged then.
      if (e.type != "tool.executed" && e.type != "tool.deferred") continue;
      Json d = e.data.json();  // not const: a missing member reads as null
      const ToolDef* tool = config.FindTool(d.value("name", ""));
      if (tool == nullptr) continue;
      const Json& args = d["args"];
      auto text = [&args](const std::string& arg) {
        return args[arg].is_string() ? args[arg].get<std::string>() : args[arg].dump();
      };
      for (const auto& [arg, type] : tool->consumes) {
        if (!args.is_object() || !args.contains(arg)) continue;
        const std::string id = text(arg);
        auto down = turned_down[type].find(id);
        if (chosen.count(type) && chosen[type] != id) {
          out.push_back({"I3", t.number, DescribeCall(e) + ": " + arg + " = '" + id + "' but the user chose '" + chosen[type] + "'"});
        } else if (!chosen.count(type) && down != turned_down[type].end()) {
          out.push_back({"I3", t.number, DescribeCall(e) + ": " + arg + " = '" + id + "', a candidate the person did not choose in turn " +
                                             std::to_string(down->second)});
        } else if (!chosen.count(type) && !produced[type].count(id)) {
          out.push_back({"I3", t.number, DescribeCall(e) + ": " + arg + " = '" + id + "' was never produced by a tool result"});
        }
        if (auto pair = tool->belongs_to.find(arg); pair != tool->belongs_to.end()) {
          const std::string owner = args.contains(pair->second) ? text(pair->second) : "";
          if (!owners[type][id].count(owner)) {
            out.push_back({"I3", t.number, DescribeCall(e) + ": " + arg + " = '" + id + "' was not listed for " + pair->second +
                                               " '" + owner + "'"});
          }
        }
      }
      if (e.type != "tool.executed" || !d.value("success", false)) continue;
      for (const auto& [type, path_text] : tool->produces) {
        auto path = JsonPath::Parse(path_text);
        if (!path.ok()) continue;
        auto scope = tool->scope.find(type);
        const std::string owner = scope != tool->scope.end() && args.contains(scope->second) ? text(scope->second) : "";
        for (const Json* v : path->Select(d["result"])) {
          if (!v->is_string() && !v->is_number_integer()) continue;
          const std::string id = v->is_string() ? v->get<std::string>() : v->dump();
          produced[type].insert(id);
          turned_down[type].erase(id);
          if (!owner.empty()) owners[type][id].insert(owner);
        }
      }
    }
  }
}

// I6: while a lease is active, another speaker's turn is blocked and reaches neither
// the model nor a tool. The lease in force at a turn's start is the one the previous
// turn left, unless it expired by then.
void CheckFloor(const std::vector<TurnRun>& turns, std::vector<InvariantViolation>& out) {
  const std::vector<std::optional<Lease>> floor = FloorAtStart(turns);
  for (size_t i = 0; i < turns.size(); ++i) {
    const TurnRun& t = turns[i];
    const std::optional<Lease>& lease = floor[i];
    if (t.refused) continue;
    int64_t started = TurnStartedAt(t);
    bool held = lease && lease->ActiveAt(started) && lease->owner != t.input.speaker;
    if (IsSafetyOverride(t)) {
      // The one exception: answered with the fixed message whoever speaks, reaching no
      // model and running nothing now, and the lease left exactly as it was.
      if (t.result.status != TurnStatus::kCompleted) {
        out.push_back({"I6", t.number, "a safety-override turn ended " + std::string(TurnStatusName(t.result.status))});
      }
      for (const TraceEvent& e : t.result.events) {
        if (e.type == "model.call" || e.type == "tool.executed") {
          out.push_back({"I6", t.number, std::string(e.name()) + " in a safety-override turn"});
        }
      }
      const bool before = lease && lease->ActiveAt(started);
      const bool after = t.result.lease.has_value();
      if (before != after || (before && (lease->owner != t.result.lease->owner ||
                                         lease->expires_at_ms != t.result.lease->expires_at_ms))) {
        out.push_back({"I6", t.number, "a safety-override turn changed the floor lease"});
      }
      continue;
    }
    if (held) {
      if (t.result.status != TurnStatus::kBlocked) {
        out.push_back({"I6", t.number, t.input.speaker + "'s turn was " + std::string(TurnStatusName(t.result.status)) +
                                           " while " + lease->owner + " held the floor"});
      }
      for (const TraceEvent& e : t.result.events) {
        if (e.type == "model.call" || e.type == "tool.executed" || e.type == "tool.deferred") {
          out.push_back({"I6", t.number, std::string(e.name()) + " during " + t.input.speaker + "'s turn while " + lease->owner +
                                             " held the floor"});
        }
      }
    }
  }
}

// I7: a plan step reported completed with validation passed had each of its required
// tools run successfully (or queued) inside it.
void CheckRequiredTools(const std::vector<TurnRun>& turns, std::vector<InvariantViolation>& out) {
  for (const FinishedStep& step : FinishedSteps(turns)) {
    if (step.status != "completed" || step.validation != "passed") continue;
    for (const std::string& tool : step.missing) {
      out.push_back({"I7", step.turn, "step " + step.id + " is completed but " + tool + " never ran successfully inside it"});
    }
  }
}

// I8: a call that its tool's approval rule pauses (every call, or those its `when`
// holds for) runs only after an explicit approval of that very call (the arguments the
// person saw, or the edited ones they approved), given by someone its approvers admit
// and before it lapsed; or under a standing permission the person gave that tool in an
// earlier answer (approval.remembered) and has not revoked.
void CheckApproval(const AgentConfig& config, const std::vector<TurnRun>& turns, std::vector<InvariantViolation>& out) {
  const ApprovalRules rules(config);
  struct Asked {
    Json approvers;
    std::string requested_by;
    int64_t expires_at_ms = 0;
  };
  std::map<std::string, Asked> asked;  // approval id -> who may answer it, until when
  std::set<std::string> standing;      // tools the person allowed for the session
  for (const TurnRun& t : turns) {
    std::vector<Json> granted;
    for (const TraceEvent& e : t.result.events) {
      if (e.type == "approval") {
        Asked a{e.data.value("approvers", Json::array()), e.data.value("requested_by", ""), 0};
        ParseIsoTime(e.data.value("expires_at", ""), &a.expires_at_ms);
        asked[e.data.value("id", "")] = std::move(a);
      } else if (e.type == "approval.granted") {
        Json d = e.data.json();  // not const: a missing member reads as null
        const std::string by = d.value("by", ""), as = d.value("as", "");
        if (auto it = asked.find(d.value("id", "")); it != asked.end()) {
          const Asked& a = it->second;
          const bool listed = std::find(a.approvers.begin(), a.approvers.end(), Json(as)) != a.approvers.end();
          const bool admits = listed && (as == "any" || as.starts_with("role:") || as == by ||
                                         (as == "requester" && by == a.requested_by));
          if (!admits) out.push_back({"I8", t.number, "approval " + it->first + " was granted by " + by + ", whom its approvers do not admit"});
          if (a.expires_at_ms != 0 && e.at_ms >= a.expires_at_ms) {
            out.push_back({"I8", t.number, "approval " + it->first + " was granted after it lapsed"});
          }
        }
        granted.push_back({{"tool", d["tool"]}, {"args", GrantedArgs(e)}});
      } else if (e.type == "approval.remembered") {
        standing.insert(e.data.value("tool", ""));
      } else if (e.type == "approval.revoked") {
        standing.erase(e.data.value("tool", ""));
      }
      if (e.type != "tool.executed" && e.type != "deferred.executed") continue;
      Json d = e.data.json();  // not const: a missing member reads as null
      const ToolDef* tool = config.FindTool(d.value("name", ""));
      if (tool == nullptr || !rules.Needs(*tool, d["args"])) continue;
      Json call = {{"tool", d["name"]}, {"args", d["args"]}};
      auto it = std::find(granted.begin(), granted.end(), call);
      if (it != granted.end()) {
        granted.erase(it);  // one approval, one run
      } else if (!standing.count(tool->name)) {
        out.push_back({"I8", t.number, DescribeCall(e) + " ran without an approval of that call"});
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

// I12: every deferred call was stored in the outbox with its turn, ran exactly once per
// idempotency key, and its outcome is recorded.
void CheckDurable(const std::vector<TurnRun>& turns, const std::vector<OutboxEntry>& outbox,
                  std::vector<InvariantViolation>& out) {
  for (const TurnRun& t : turns) {
    std::map<std::string, int> runs;
    for (const TraceEvent& e : t.result.events) {
      if (e.type == "deferred.executed") ++runs[e.data.value("idempotency_key", "")];
    }
    const std::set<std::string> withdrawn = WithdrawnCalls(t, "idempotency_key");
    for (const TraceEvent& e : t.result.events) {
      if (e.type != "tool.deferred") continue;
      std::string key = e.data.value("idempotency_key", "");
      auto row = std::find_if(outbox.begin(), outbox.end(), [&](const OutboxEntry& o) { return o.key == key; });
      if (withdrawn.contains(key)) {
        // The person was told the request failed: the write must never run.
        if (row != outbox.end() || runs[key] != 0) {
          out.push_back({"I12", t.number, "withdrawn deferred call " + key + " reached the outbox or ran"});
        }
        continue;
      }
      if (row == outbox.end()) {
        out.push_back({"I12", t.number, "deferred " + e.data.value("name", "") + " (" + key + ") has no outbox row"});
      } else if (row->status != "done" || row->result.is_null()) {
        out.push_back({"I12", t.number, "outbox row " + key + " is " + row->status + " with no recorded outcome"});
      }
      if (runs[key] != 1) {
        out.push_back({"I12", t.number, "deferred call " + key + " ran " + std::to_string(runs[key]) + " times"});
      }
    }
    // A streamed reply: its writes were stored before its first byte left, and what the
    // person received is what was stored (a delta is never taken back).
    for (const std::string& key : t.writes_not_stored) {
      out.push_back({"I12", t.number, "deferred call " + key + " was not in the store when the reply streamed"});
    }
    if (t.streamed && !t.deltas.empty()) {
      std::string final_text;
      for (const TraceEvent& e : t.result.events) {
        if (e.type == "reply.final") final_text = e.data.value("text", "");
      }
      if (final_text.compare(0, t.deltas.size(), t.deltas) != 0) {
        out.push_back({"I12", t.number, "the streamed reply \"" + t.deltas + "\" is not what was stored: \"" + final_text + "\""});
      }
    }
  }
}

}  // namespace

int64_t TurnStartedAt(const TurnRun& t) { return t.result.events.empty() ? 0 : t.result.events.front().at_ms; }

bool IsSafetyOverride(const TurnRun& t) {
  return std::any_of(t.result.events.begin(), t.result.events.end(),
                     [](const TraceEvent& e) { return e.type == "safety.override"; });
}

std::vector<std::optional<Lease>> FloorAtStart(const std::vector<TurnRun>& turns) {
  std::vector<std::optional<Lease>> out;
  std::optional<Lease> lease;
  for (const TurnRun& t : turns) {
    out.push_back(lease);
    // A refused or blocked turn changes nothing; a safety override leaves the lease as it was (I6).
    if (t.refused || t.result.status == TurnStatus::kBlocked || IsSafetyOverride(t)) continue;
    lease = t.result.lease ? std::optional<Lease>(*t.result.lease) : std::nullopt;
  }
  return out;
}

// A step paused for an approval resumes in a later turn: what it ran before the pause
// still counts.
std::vector<FinishedStep> FinishedSteps(const std::vector<TurnRun>& turns) {
  std::vector<FinishedStep> out;
  std::vector<std::string> ran;
  std::string step;
  for (const TurnRun& t : turns) {
    for (const TraceEvent& e : t.result.events) {
      if (e.type == "plan.step.started") {
        std::string id = e.data.value("step", "");
        if (!e.data.value("resumed", false) || id != step) ran.clear();
        step = id;
      }
      bool ok = (e.type == "tool.executed" && e.data.value("success", false)) || e.type == "tool.deferred";
      if (ok) ran.push_back(e.data.value("name", ""));
      if (e.type != "plan.step.finished") continue;
      FinishedStep finished{t.number, e.data.value("step", ""), e.data.value("status", ""),
                            e.data.value("validationStatus", ""), {}};
      for (const Json& tool : e.data.value("requiredTools", Json::array())) {
        if (tool.is_string() && std::find(ran.begin(), ran.end(), tool.get<std::string>()) == ran.end()) {
          finished.missing.push_back(tool.get<std::string>());
        }
      }
      out.push_back(std::move(finished));
    }
  }
  return out;
}

Json GrantedArgs(const TraceEvent& granted) {
  Json edited = granted.data.value("approved_args", Json());
  return edited.is_null() ? granted.data.value("args", Json()) : edited;
}

const std::vector<std::string>& CheckedInvariants() {
  static const std::vector<std::string> kIds = {"I1", "I2", "I3", "I4",  "I5",  "I6", "I7",
                                                "I8", "I9", "I10", "I11", "I12", "I13"};
  return kIds;
}

std::vector<InvariantViolation> CheckInvariants(const AgentConfig& config, const std::vector<TurnRun>& turns,
                                                const std::vector<Message>& history,
                                                const std::vector<OutboxEntry>& outbox) {
  std::vector<InvariantViolation> out;
  for (const TurnRun& t : turns) {
    CheckStop(t, out);
    CheckTruncate(config, t, out);
    CheckSchema(config, t, out);
    CheckDeferral(config, t, history, out);
    CheckHonesty(config, t, out);
    CheckBounded(config, t, out);
  }
  CheckRequiredTools(turns, out);
  CheckDurable(turns, outbox, out);
  CheckFloor(turns, out);
  CheckProvenance(config, turns, out);
  CheckApproval(config, turns, out);
  CheckOutsideData(config, turns, out);
  CheckPairing(history, out);
  return out;
}

}  // namespace reins
