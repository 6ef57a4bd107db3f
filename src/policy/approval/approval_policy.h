// ApprovalPolicy (seed 003, I8): a tool with `approval: required` never runs on the
// model's word alone. Its call pauses the turn (awaiting_approval); the person's
// `approve: true` runs exactly that call, `approve: false` gives the model a refusal.
#pragma once

#include "turn/policy.h"

namespace reins {

class ApprovalPolicy final : public Policy {
 public:
  std::string_view Name() const override { return "approval"; }
  CallVerdict Guard(TurnContext& ctx, const ProposedCall& call) const override;
  std::optional<Resumption> Resume(TurnContext& ctx) const override;
};

}  // namespace reins
