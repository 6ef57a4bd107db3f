#include "policy/approval/approval_answer.h"

#include "policy/approval/approval_words.h"
#include "policy/approval/standing_permissions.h"
#include "reins/clock.h"

namespace reins {
namespace {

// "15 minutes", "90 seconds", "2 hours".
std::string Duration(int seconds) {
  auto unit = [](int n, const char* one) { return std::to_string(n) + " " + one + (n == 1 ? "" : "s"); };
  if (seconds % 3600 == 0) return unit(seconds / 3600, "hour");
  if (seconds % 60 == 0) return unit(seconds / 60, "minute");
  return unit(seconds, "second");
}

}  // namespace

Status AnswerApproval(TurnContext& ctx) {
  const TurnInput& in = ctx.input;
  HeapOptional<PendingApproval>& pending = ctx.session.pending_approval;
  if (!pending) return FailedPrecondition("there is no pending approval to answer with approve");
  const std::optional<std::string> as = pending->AdmittedAs(in.speaker, in.roles);
  if (!as) {
    return PermissionDenied("'" + in.speaker + "' may not answer this approval: " + pending->ApproversInWords() +
                            " may. Nothing changed; it is still pending");
  }
  const ApprovalAnswer& answer = *in.approve;
  Json approved;  // null: the arguments as proposed
  if (!answer.args.is_null()) {
    if (!pending->allow_edit) {
      return InvalidArgument("this approval takes no changed arguments (its tool's approval.allow_edit is false): "
                             "approve or deny the call as it is");
    }
    approved = pending->args.is_object() ? pending->args : Json::object();
    for (const auto& [name, value] : answer.args.items()) approved[name] = value;  // a shallow merge
    if (approved == pending->args) approved = nullptr;
  }
  if (answer.remember && !pending->may_remember) {
    return InvalidArgument(pending->reason == ApprovalReason::kUntrustedData
                               ? "an approval for a call that outside data steered holds for that one call; it cannot "
                                 "be remembered (I8)"
                               : "this tool's approval.remember is none: each of its calls asks again");
  }
  PendingDecisions& d = ctx.decide();
  d.decided_approval = std::make_unique<PendingApproval>(std::move(*pending));
  pending.reset();
  d.approval_answer = answer;
  d.approved_args = approved;
  const PendingApproval& a = *d.decided_approval;
  ctx.request_tools = a.request_tools;
  Json event = {{"id", a.id}, {"tool", a.tool}, {"args", a.args}, {"by", in.speaker}, {"as", *as}};
  if (!approved.is_null()) event["approved_args"] = approved;
  if (!answer.message.empty()) event["message"] = answer.message;
  if (answer.remember) event["remember"] = true;
  ctx.Emit(answer.decision ? EventType::kApprovalGranted : EventType::kApprovalDenied, std::move(event));
  if (answer.remember) {
    GrantStandingPermission(ctx.session, {a.tool, in.speaker, ctx.result.turn_number, ctx.clock.NowMs()});
    ctx.Emit("approval.remembered", {{"tool", a.tool}, {"by", in.speaker}});
  }
  return {};
}

std::optional<std::string> LapseApproval(TurnContext& ctx) {
  HeapOptional<PendingApproval>& pending = ctx.session.pending_approval;
  if (!pending || !pending->LapsedAt(ctx.clock.NowMs())) return std::nullopt;
  const PendingApproval& a = *pending;
  ctx.Emit("approval.lapsed", {{"id", a.id}, {"tool", a.tool}, {"args", a.args},
                               {"expired_at", FormatIsoTime(a.expires_at_ms)}});
  ctx.decide().lapsed_approval_id = a.id;
  // The call as the person was asked about it: the rule's own question, else in words.
  const ToolDef* tool = ctx.FindTool(a.tool);
  const bool own_prompt = tool != nullptr && !tool->approval.prompt.empty() && !a.prompt.empty();
  const std::string call = own_prompt        ? "(\u201c" + a.prompt + "\u201d)"
                           : tool != nullptr ? "with " + CallInWords(*tool, a.args, &ctx.session.entities)
                                             : "with \u201c" + DefaultToolTitle(a.tool) + "\u201d";
  const int ttl_s = tool != nullptr ? tool->approval.ttl_s : 0;
  std::string note = "I did not go ahead " + call + ": the approval lapsed" +
                     (ttl_s > 0 ? " after " + Duration(ttl_s) : "") + " without an answer. Ask again if you still want it.";
  ctx.extend().system_notes.push_back("The approval for " + a.tool + " with " + a.args.dump() +
                                      " lapsed without an answer: that call was not run and will not run. Do not say "
                                      "it was done.");
  if (!ctx.session.pending_plan.empty()) {
    ctx.Emit("plan.abandoned", {{"step", ctx.session.pending_plan[ctx.session.pending_plan_step].id}});
    ctx.session.pending_plan.clear();
  }
  pending.reset();
  return note;
}

}  // namespace reins
