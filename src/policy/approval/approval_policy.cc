#include "policy/approval/approval_policy.h"

#include "policy/approval/approval_words.h"
#include "policy/approval/standing_permissions.h"

namespace reins {

// The one call this turn's approval covers: exactly that call, with the arguments the
// person saw or edited (I8).
CallVerdict ApprovalPolicy::Guard(TurnContext& ctx, const ProposedCall& proposed) const {
  const ToolDef& tool = *proposed.tool;
  if (!tool.approval.required || ctx.Approved(*proposed.call)) return CallVerdict::Continue();
  const std::optional<ApprovalReason> reason = rules_.Needs(tool, proposed.call->args);
  if (!reason) return CallVerdict::Continue();
  if (std::optional<StandingPermission> standing = FindStandingPermission(ctx.session, tool.name)) {
    ctx.Emit("approval.standing", {{"call_id", proposed.call->id}, {"tool", tool.name}, {"by", standing->by},
                                   {"granted_turn", standing->turn}});
    return CallVerdict::Continue();
  }
  return CallVerdict::Pause("waiting for the person to approve " + tool.title, *reason,
                            RulePrompt(tool, proposed.call->args, &ctx.session.entities), nullptr);
}

// The decided call re-enters history as its own call/result pair, so every call still
// has exactly one result (I10) and the model sees what happened: what the person
// decided, the arguments they approved, and what they said.
std::optional<Resumption> ApprovalPolicy::Resume(TurnContext& ctx) const {
  const PendingDecisions& d = ctx.decisions();
  if (!d.decided_approval) return std::nullopt;
  const PendingApproval& a = *d.decided_approval;
  const ApprovalAnswer& answer = d.approval_answer;
  const Json& args = d.approved_args.is_null() ? a.args : d.approved_args;
  Resumption r;
  r.note = std::string("The user ") + (answer.decision ? "approved" : "denied") + " running " + a.tool + " with " +
           args.dump() + ".";
  if (!d.approved_args.is_null()) r.note += " They changed the proposed arguments " + a.args.dump() + " to these.";
  if (!answer.message.empty()) r.note += " They said: \u201c" + answer.message + "\u201d";
  if (answer.remember) r.note += " They allowed " + a.tool + " for the rest of this conversation.";
  r.call = ToolCall{ApprovedCallId(a), a.tool, args.dump(), args, true};
  r.denied = !answer.decision;
  return r;
}

}  // namespace reins
