#include "policy/approval/approval_policy.h"

namespace reins {

CallVerdict ApprovalPolicy::Guard(TurnContext& ctx, const ProposedCall& proposed) const {
  if (!proposed.tool->approval_required) return CallVerdict::Continue();
  // The call the person approved, replayed by the pipeline with exactly those arguments.
  if (!ctx.approved_call_id.empty() && proposed.call->id == ctx.approved_call_id) return CallVerdict::Continue();
  return CallVerdict::Pause("waiting for the person to approve " + proposed.tool->title);
}

}  // namespace reins
