#include "policy/approval/approval_policy.h"

namespace reins {

// The one call this turn's approval covers: exactly that call, those arguments (I8).
CallVerdict ApprovalPolicy::Guard(TurnContext& ctx, const ProposedCall& proposed) const {
  if (!proposed.tool->approval_required || ctx.Approved(*proposed.call)) return CallVerdict::Continue();
  return CallVerdict::Pause("waiting for the person to approve " + proposed.tool->title);
}

// The decided call re-enters history as its own call/result pair, so every call still
// has exactly one result (I10) and the model sees what happened.
std::optional<Resumption> ApprovalPolicy::Resume(TurnContext& ctx) const {
  const PendingDecisions& d = ctx.decisions();
  if (!d.decided_approval) return std::nullopt;
  const PendingApproval& a = *d.decided_approval;
  Resumption r;
  r.note = std::string("The user ") + (d.approval_granted ? "approved" : "denied") + " running " + a.tool + " with " +
           a.args.dump() + ".";
  r.call = ToolCall{ApprovedCallId(a), a.tool, a.args.dump(), a.args, true};
  r.denied = !d.approval_granted;
  return r;
}

}  // namespace reins
