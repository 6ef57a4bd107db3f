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
#include <vector>

#include "reins/heap_optional.h"
#include "reins/json.h"
#include "reins/turn.h"

namespace reins {

// The entity ids of a session (I3): which ids tool results produced, to whom a scoped id
// belongs (entities.scope), what the person chose in clarifications and which
// candidates they turned down, and the titles clarification options gave ids.
class EntityLedger {
 public:
  // A result produced `id` of `type`; `owner`: the value the producing call had in the
  // argument its entities.scope names for the type ("" for an unscoped type). A
  // candidate the person turned down is one no longer once a result produces it again.
  void AddProduced(const std::string& type, const std::string& id, const std::string& owner = "");
  bool WasProduced(const std::string& type, const std::string& id) const;
  // The owners a result listed `id` of `type` under (entities.scope); empty for none.
  std::vector<std::string> OwnersOf(const std::string& type, const std::string& id) const;
  // The person chose `id` for `type` in the turn numbered `turn`, among `candidates`:
  // the choice binds that turn, and the other candidates stay turned down in later turns
  // until a result produces them again or the person chooses one of them.
  void Choose(const std::string& type, const std::string& id, int turn, const std::vector<std::string>& candidates = {});
  // The id the user chose for `type` if the choice binds `turn`.
  std::optional<std::string> ChosenFor(const std::string& type, int turn) const;
  // The turn in which the person turned `id` down (chose another candidate), if they did
  // and nothing produced it since.
  std::optional<int> TurnedDown(const std::string& type, const std::string& id) const;
  // How clarification options named ids ("Maria Garcia"), for the words a person reads.
  void AddTitle(const std::string& id, const std::string& title) { Entries().titles[id] = title; }
  const std::string* TitleOf(const std::string& id) const;

  bool empty() const { return !entries_; }

  Json ToJson() const;
  static EntityLedger FromJson(const Json& j);

 private:
  struct Maps {
    std::map<std::string, std::set<std::string>> produced;
    std::map<std::string, std::map<std::string, std::set<std::string>>> owners;  // type -> id -> owners
    std::map<std::string, std::pair<std::string, int>> chosen;
    std::map<std::string, std::map<std::string, int>> turned_down;  // type -> id -> turn
    std::map<std::string, std::string> titles;
  };
  Maps& Entries() {
    if (!entries_) entries_ = Maps{};
    return *entries_;
  }
  // On the heap from the first entry: a session whose tools produce no entity (most
  // sessions of most agents) keeps 8 bytes here instead of the maps' 240, in the
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
