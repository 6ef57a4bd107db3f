// ProvenanceGuard (I3): an argument declared as an entity (`entities.consumes`) must
// hold an id that an earlier tool result of this session produced, or the one the user
// chose in a clarification. After the user answers a clarification of that entity
// type, only the chosen id is accepted for the rest of that turn, and the candidates
// they did not choose stay refused in later turns until a result produces them again
// (a new lookup) or the person chooses one: a model that "picks the other Maria" a turn
// later is refused instead of refilling the wrong patient's prescription. A scoped id
// (entities.scope / belongs_to) must also belong to the owner the call pairs it with.
#pragma once

#include <map>
#include <string>

#include "domain/json_path.h"
#include "turn/policy.h"

namespace reins {

class ProvenanceGuard final : public Policy {
 public:
  explicit ProvenanceGuard(const AgentConfig& config);
  std::string_view Name() const override { return "provenance"; }
  CallVerdict Guard(TurnContext& ctx, const ProposedCall& call) const override;
  void Observe(TurnContext& ctx, const ProposedCall& call, const ResultEnvelope& result) const override;
  void OnClarificationAnswered(TurnContext& ctx, const PendingClarification& pending,
                               const std::string& option_id) const override;

 private:
  // tool -> entity type -> compiled JSONPath
  std::map<std::string, std::map<std::string, JsonPath>> produces_;
};

}  // namespace reins
