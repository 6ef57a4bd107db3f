// ProvenanceGuard (I3): an argument declared as an entity (`entities.consumes`) must
// hold an id that an earlier tool result of this session produced, or the one the user
// chose in a clarification. After the user answers a clarification of that entity
// type, only the chosen id is accepted for the rest of that turn, so a model that
// "picks the other John" is refused instead of messaging the wrong person.
#pragma once

#include <map>
#include <string>

#include "core/json_path.h"
#include "policy/policy.h"

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

// The ids a result produces, per entity type, using the tool's `entities.produces`.
std::map<std::string, std::vector<std::string>> ProducedEntities(const ToolDef& tool, const ResultEnvelope& result);

// Which entity type the options of a clarification are ids of: the tool's only
// produced type, else the type whose produced ids include the first option; "" if none.
std::string EntityTypeOfOptions(const ToolDef& tool, const ResultEnvelope& result);

// An entity id as text: strings as they are, integers in decimal; "" for anything else.
std::string EntityIdText(const Json& v);

}  // namespace reins
