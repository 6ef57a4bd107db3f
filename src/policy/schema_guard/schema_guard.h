// SchemaGuard (I11): a call runs only if its arguments validate against the tool's
// input_schema. Schemas are compiled once, when the agent config is loaded.
#pragma once

#include <map>
#include <string>

#include "turn/policy.h"
#include "schema/schema_validator.h"

namespace reins {

class SchemaGuard final : public Policy {
 public:
  explicit SchemaGuard(const AgentConfig& config);
  std::string_view Name() const override { return "schema"; }
  CallVerdict Guard(TurnContext& ctx, const ProposedCall& call) const override;

 private:
  std::map<std::string, SchemaValidator> validators_;
};

}  // namespace reins
