// ApprovalPolicy (seed 003, I8): a tool whose approval rule holds for a call (`approval:
// required`, or its `when` conditions) never runs on the model's word alone. The call
// pauses the turn (awaiting_approval) with a question in words; the person's answer
// (approval_answer.h) runs exactly that call, or the arguments they edited, or gives
// the model the refusal and what they said. A standing permission the person gave the
// tool in this session lets it run without asking.
#pragma once

#include "policy/approval/approval_rules.h"
#include "turn/policy.h"

namespace reins {

class ApprovalPolicy final : public Policy {
 public:
  explicit ApprovalPolicy(const AgentConfig& config) : rules_(config) {}
  std::string_view Name() const override { return "approval"; }
  CallVerdict Guard(TurnContext& ctx, const ProposedCall& call) const override;
  std::optional<Resumption> Resume(TurnContext& ctx) const override;

 private:
  ApprovalRules rules_;
};

}  // namespace reins
