// SessionState: what a session remembers between turns besides its message history:
// the entity ids tool results produced (for provenance, I3), the ids the user chose
// in clarifications, and the pending clarification. Persisted as JSON with the
// session in the same transaction as the turn that changed it.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "reins/heap_optional.h"
#include "reins/json.h"
#include "reins/turn.h"

namespace reins {

class EntityLedger {
 public:
  void AddProduced(const std::string& type, const std::string& id) { Entries().produced[type].insert(id); }
  bool WasProduced(const std::string& type, const std::string& id) const;
  // The user chose `id` for `type` in the turn numbered `turn`; binds that turn.
  void Choose(const std::string& type, const std::string& id, int turn) { Entries().chosen[type] = {id, turn}; }
  // The id the user chose for `type` if the choice binds `turn`.
  std::optional<std::string> ChosenFor(const std::string& type, int turn) const;

  bool empty() const { return !entries_ || (entries_->produced.empty() && entries_->chosen.empty()); }

  Json ToJson() const;
  static EntityLedger FromJson(const Json& j);

 private:
  struct Maps {
    std::map<std::string, std::set<std::string>> produced;
    std::map<std::string, std::pair<std::string, int>> chosen;
  };
  Maps& Entries() {
    if (!entries_) entries_ = Maps{};
    return *entries_;
  }
  // On the heap from the first entry: a session whose tools produce no entity (most
  // sessions of most agents) keeps 8 bytes here instead of two maps' 96, in the
  // runtime's cache for as long as it is cached.
  HeapOptional<Maps> entries_;
};

struct SessionState {
  EntityLedger entities;
  HeapOptional<PendingClarification> pending_clarification;
  HeapOptional<PendingApproval> pending_approval;
  // A plan interrupted by a clarification or an approval: its steps and the step it
  // stopped in, resumed once the person answers.
  std::vector<PlanStep> pending_plan;
  size_t pending_plan_step = 0;
  // What a mechanism keeps between turns in a slot of its own, by the mechanism's name
  // (Policy::Name): any JSON, stored with the session in the turn's transaction. A new
  // mechanism keeps its session state here instead of adding fields to this struct.
  Json& Slot(std::string_view mechanism) { return slots[std::string(mechanism)]; }
  std::map<std::string, Json> slots;

  // Nothing remembered: as a new session's. A field added above is tested here too.
  bool empty() const {
    return entities.empty() && !pending_clarification && !pending_approval && pending_plan.empty() &&
           pending_plan_step == 0 && slots.empty();
  }

  Json ToJson() const;
  static SessionState FromJson(const Json& j);
};

Json PendingClarificationToJson(const PendingClarification& p);
std::optional<PendingClarification> PendingClarificationFromJson(const Json& j);

}  // namespace reins
