#include "turn/session_state.h"

#include "domain/stored_json.h"

namespace reins {

void EntityLedger::AddProduced(const std::string& type, const std::string& id, const std::string& owner) {
  Maps& m = Entries();
  m.produced[type].insert(id);
  if (!owner.empty()) m.owners[type][id].insert(owner);
  if (auto down = m.turned_down.find(type); down != m.turned_down.end()) down->second.erase(id);
}

bool EntityLedger::WasProduced(const std::string& type, const std::string& id) const {
  if (!entries_) return false;
  auto it = entries_->produced.find(type);
  return it != entries_->produced.end() && it->second.count(id) > 0;
}

std::vector<std::string> EntityLedger::OwnersOf(const std::string& type, const std::string& id) const {
  if (!entries_) return {};
  auto of_type = entries_->owners.find(type);
  if (of_type == entries_->owners.end()) return {};
  auto it = of_type->second.find(id);
  if (it == of_type->second.end()) return {};
  return {it->second.begin(), it->second.end()};
}

void EntityLedger::Choose(const std::string& type, const std::string& id, int turn,
                          const std::vector<std::string>& candidates) {
  Maps& m = Entries();
  m.chosen[type] = {id, turn};
  std::map<std::string, int>& down = m.turned_down[type];
  down.erase(id);
  for (const std::string& other : candidates) {
    if (other != id) down[other] = turn;
  }
  if (down.empty()) m.turned_down.erase(type);
}

std::optional<std::string> EntityLedger::ChosenFor(const std::string& type, int turn) const {
  if (!entries_) return std::nullopt;
  auto it = entries_->chosen.find(type);
  if (it == entries_->chosen.end() || it->second.second != turn) return std::nullopt;
  return it->second.first;
}

std::optional<int> EntityLedger::TurnedDown(const std::string& type, const std::string& id) const {
  if (!entries_) return std::nullopt;
  auto of_type = entries_->turned_down.find(type);
  if (of_type == entries_->turned_down.end()) return std::nullopt;
  auto it = of_type->second.find(id);
  if (it == of_type->second.end()) return std::nullopt;
  return it->second;
}

const std::string* EntityLedger::TitleOf(const std::string& id) const {
  if (!entries_) return nullptr;
  auto it = entries_->titles.find(id);
  return it == entries_->titles.end() ? nullptr : &it->second;
}

Json EntityLedger::ToJson() const {
  Json produced = Json::object();
  Json chosen = Json::object();
  Json j = Json::object();
  if (entries_) {
    for (const auto& [type, ids] : entries_->produced) produced[type] = ids;
    for (const auto& [type, choice] : entries_->chosen) {
      chosen[type] = JsonObject("id", choice.first, "turn", choice.second);
    }
    if (!entries_->owners.empty()) {
      Json& owners = j["owners"];
      for (const auto& [type, ids] : entries_->owners) {
        for (const auto& [id, of] : ids) owners[type][id] = of;
      }
    }
    for (const auto& [type, ids] : entries_->turned_down) {
      for (const auto& [id, turn] : ids) j["turned_down"][type][id] = turn;
    }
    if (!entries_->titles.empty()) j["titles"] = entries_->titles;
  }
  j["produced"] = std::move(produced);
  j["chosen"] = std::move(chosen);
  return j;
}

EntityLedger EntityLedger::FromJson(const Json& j) {
  EntityLedger ledger;
  if (!j.is_object()) return ledger;
  auto mapping = [&j](const char* key) -> const Json* {
    auto it = j.find(key);
    return it != j.end() && it->is_object() ? &*it : nullptr;
  };
  if (const Json* p = mapping("produced")) {
    for (const auto& [type, ids] : p->items()) {
      if (!ids.is_array()) continue;
      for (const Json& id : ids) {
        if (id.is_string()) ledger.AddProduced(type, id.get<std::string>());
      }
    }
  }
  if (const Json* o = mapping("owners")) {
    for (const auto& [type, ids] : o->items()) {
      if (!ids.is_object()) continue;
      for (const auto& [id, owners] : ids.items()) {
        if (!owners.is_array()) continue;
        for (const Json& owner : owners) {
          if (owner.is_string()) ledger.AddProduced(type, id, owner.get<std::string>());
        }
      }
    }
  }
  if (const Json* c = mapping("chosen")) {
    for (const auto& [type, choice] : c->items()) {
      if (choice.is_object() && choice.contains("id") && choice["id"].is_string()) {
        ledger.Choose(type, choice["id"].get<std::string>(), choice.value("turn", 0));
      }
    }
  }
  if (const Json* d = mapping("turned_down")) {
    for (const auto& [type, ids] : d->items()) {
      if (!ids.is_object()) continue;
      for (const auto& [id, turn] : ids.items()) {
        if (turn.is_number_integer()) ledger.Entries().turned_down[type][id] = turn.get<int>();
      }
    }
  }
  if (const Json* t = mapping("titles")) {
    for (const auto& [id, title] : t->items()) {
      if (title.is_string()) ledger.AddTitle(id, title.get<std::string>());
    }
  }
  return ledger;
}

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
  p.request_tools = StoredStrings(j, "request_tools");
  return p;
}

Json SessionState::ToJson() const {
  Json j = JsonObject("entities", entities.ToJson());
  if (pending_clarification) j["pending_clarification"] = PendingClarificationToJson(*pending_clarification);
  if (pending_approval) j["pending_approval"] = PendingApprovalToStored(*pending_approval);
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
    s.pending_approval = PendingApprovalFromStored(*a);
  }
  if (auto k = j.find("slots"); k != j.end() && k->is_object()) {
    for (const auto& [mechanism, state] : k->items()) s.slots[mechanism] = state;
  }
  return s;
}

}  // namespace reins
