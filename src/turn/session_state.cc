#include "turn/session_state.h"

namespace reins {

bool EntityLedger::WasProduced(const std::string& type, const std::string& id) const {
  if (!entries_) return false;
  auto it = entries_->produced.find(type);
  return it != entries_->produced.end() && it->second.count(id) > 0;
}

std::optional<std::string> EntityLedger::ChosenFor(const std::string& type, int turn) const {
  if (!entries_) return std::nullopt;
  auto it = entries_->chosen.find(type);
  if (it == entries_->chosen.end() || it->second.second != turn) return std::nullopt;
  return it->second.first;
}

Json EntityLedger::ToJson() const {
  Json produced = Json::object();
  Json chosen = Json::object();
  if (entries_) {
    for (const auto& [type, ids] : entries_->produced) produced[type] = ids;
    for (const auto& [type, choice] : entries_->chosen) {
      chosen[type] = JsonObject("id", choice.first, "turn", choice.second);
    }
  }
  return JsonObject("produced", std::move(produced), "chosen", std::move(chosen));
}

EntityLedger EntityLedger::FromJson(const Json& j) {
  EntityLedger ledger;
  if (!j.is_object()) return ledger;
  if (auto p = j.find("produced"); p != j.end() && p->is_object()) {
    for (const auto& [type, ids] : p->items()) {
      if (!ids.is_array()) continue;
      for (const Json& id : ids) {
        if (id.is_string()) ledger.AddProduced(type, id.get<std::string>());
      }
    }
  }
  if (auto c = j.find("chosen"); c != j.end() && c->is_object()) {
    for (const auto& [type, choice] : c->items()) {
      if (choice.is_object() && choice.contains("id") && choice["id"].is_string()) {
        ledger.Choose(type, choice["id"].get<std::string>(), choice.value("turn", 0));
      }
    }
  }
  return ledger;
}

namespace {

// A list of strings from a stored state, ignoring anything else in it.
std::vector<std::string> StringList(const Json& j, const char* key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const Json& v : *it) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

}  // namespace

Json PendingClarificationToJson(const PendingClarification& p) {
  Json j = {{"id", p.id}, {"clarification", ClarificationToJson(p.clarification)}, {"tool", p.tool},
            {"entity_type", p.entity_type}, {"request_text", p.request_text}};
  if (!p.request_tools.empty()) j["request_tools"] = p.request_tools;
  return j;
}

std::optional<PendingClarification> PendingClarificationFromJson(const Json& j) {
  if (!j.is_object() || !j.contains("clarification")) return std::nullopt;
  // Re-validate through the envelope parser so a corrupted row cannot yield options without ids.
  ResultEnvelope e = NormaliseToolResult(
      Json{{"next_action", "clarification_needed"}, {"clarification", j["clarification"]}});
  if (!e.clarification) return std::nullopt;
  PendingClarification p;
  p.id = j.value("id", "");
  p.clarification = *e.clarification;
  p.tool = j.value("tool", "");
  p.entity_type = j.value("entity_type", "");
  p.request_text = j.value("request_text", "");
  p.request_tools = StringList(j, "request_tools");
  return p;
}

Json SessionState::ToJson() const {
  Json j = JsonObject("entities", entities.ToJson());
  if (pending_clarification) j["pending_clarification"] = PendingClarificationToJson(*pending_clarification);
  if (pending_approval) {
    const PendingApproval& a = *pending_approval;
    Json& p = j["pending_approval"];
    p = {{"id", a.id}, {"tool", a.tool}, {"args", a.args}, {"request_text", a.request_text}};
    if (!a.request_tools.empty()) p["request_tools"] = a.request_tools;
    if (a.reason != ApprovalReason::kPolicy) p["reason"] = kApprovalReasons.Name(a.reason);
    if (!a.prompt.empty()) p["prompt"] = a.prompt;
    if (!a.provenance.is_null()) p["provenance"] = a.provenance;
  }
  if (!pending_plan.empty()) {
    Json steps = Json::array();
    for (const PlanStep& st : pending_plan) steps.push_back(PlanStepToJson(st));
    j["pending_plan"] = {{"steps", std::move(steps)}, {"step", pending_plan_step}};
  }
  Json kept = Json::object();
  for (const auto& [mechanism, state] : slots) {
    if (!state.is_null()) kept[mechanism] = state;
  }
  if (!kept.empty()) j["slots"] = std::move(kept);
  return j;
}

SessionState SessionState::FromJson(const Json& j) {
  SessionState s;
  if (!j.is_object()) return s;
  if (auto e = j.find("entities"); e != j.end()) s.entities = EntityLedger::FromJson(*e);
  if (auto p = j.find("pending_clarification"); p != j.end()) s.pending_clarification = PendingClarificationFromJson(*p);
  if (auto p = j.find("pending_plan"); p != j.end() && p->is_object() && p->contains("steps")) {
    for (const Json& st : (*p)["steps"]) s.pending_plan.push_back(PlanStepFromJson(st));
    s.pending_plan_step = p->value("step", size_t{0});
    if (s.pending_plan_step >= s.pending_plan.size()) s.pending_plan.clear();
  }
  if (auto a = j.find("pending_approval"); a != j.end() && a->is_object() && a->contains("tool")) {
    s.pending_approval = PendingApproval{a->value("id", ""), a->value("tool", ""), a->value("args", Json::object()),
                                         a->value("request_text", ""), StringList(*a, "request_tools"),
                                         kApprovalReasons.Parse(a->value("reason", "")).value_or(ApprovalReason::kPolicy),
                                         a->value("prompt", ""), a->value("provenance", Json())};
  }
  if (auto k = j.find("slots"); k != j.end() && k->is_object()) {
    for (const auto& [mechanism, state] : k->items()) s.slots[mechanism] = state;
  }
  return s;
}

}  // namespace reins
