// ClarificationAnswer (seed 001): a turn that answers a pending clarification (`select`)
// goes on with the person's choice. The model hears which option was chosen and
// continues the original request; a tool that asked its question mid-call (an MCP
// elicitation, mcp/elicitation.h) is not re-run by the model but resumed: the same call
// goes back to its backend with the answer.
#pragma once

#include "turn/policy.h"

namespace reins {

class ClarificationAnswer final : public Policy {
 public:
  std::string_view Name() const override { return "clarification_answer"; }
  std::optional<Resumption> Resume(TurnContext& ctx) const override;
};

}  // namespace reins
