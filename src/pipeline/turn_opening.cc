#include "pipeline/turn_pipeline.h"

#include "pipeline/event_text.h"
#include "pipeline/reply_text.h"
#include "policy/approval/approval_answer.h"
#include "policy/approval/approval_words.h"
#include "policy/approval/standing_permissions.h"

namespace reins {

using namespace reply_text;

bool TurnPipeline::Gate(TurnContext& ctx, TurnPhaseMachine& phase) {
  if (ctx.input.cancel) {
    Cancel(ctx, phase);
    return true;
  }
  // Withdrawing a permission only makes the session stricter: no lease holds it back.
  if (!ctx.input.revoke.empty()) {
    Revoke(ctx, phase);
    return true;
  }
  const AdmitVerdict verdict = policies_.Admit(ctx);
  if (verdict.kind == AdmitVerdict::Kind::kBlock) {
    // Reaches neither the model nor any tool, and leaves no trace in the model's history.
    phase.Enter(TurnPhase::kBlocked);
    ctx.result.blocked_reason = verdict.reason;
    Json blocked = {{"reason", verdict.reason}};
    if (verdict.stale) blocked["stale"] = true;
    ctx.Emit("turn.blocked", std::move(blocked));
    return true;
  }
  if (verdict.kind == AdmitVerdict::Kind::kCancel) {
    Cancel(ctx, phase);
    return true;
  }
  return false;
}

// Ends the standing permission the person gave a tool (TurnInput::revoke): its next call
// that the approval rule pauses asks again. No model call, nothing in the history.
void TurnPipeline::Revoke(TurnContext& ctx, TurnPhaseMachine& phase) {
  const std::string& tool = ctx.input.revoke;
  const bool found = RevokeStandingPermission(ctx.session, tool);
  ctx.Emit("approval.revoked", {{"tool", tool}, {"by", ctx.input.speaker}, {"found", found}});
  const ToolDef* def = ctx.FindTool(tool);
  const std::string title = "\u201c" + (def != nullptr ? def->title : DefaultToolTitle(tool)) + "\u201d";
  Deliver(ctx, found ? "Okay: I will ask you again before each " + title + "."
                     : "There was no standing permission for " + title + "; I ask before each one already.",
          phase);
}

// The person answered an approval that had lapsed: nothing runs, and they are told.
void TurnPipeline::AnswerLapsed(TurnContext& ctx, std::string note, TurnPhaseMachine& phase) {
  ctx.Append(Message::User(ctx.input.approve->decision ? "Yes, go ahead." : "No.", ctx.input.speaker));
  ctx.Append(Message::Assistant(note));
  Deliver(ctx, std::move(note), phase);
}

// "Stop": releases the floor and withdraws whatever was pending (a clarification, an
// approval, the rest of a plan). Reached through a cancel pattern or TurnInput.cancel.
void TurnPipeline::Cancel(TurnContext& ctx, TurnPhaseMachine& phase) {
  phase.Enter(TurnPhase::kCancelled);
  if (ctx.session.pending_clarification) {
    ctx.Emit("clarification.cancelled", {{"id", ctx.session.pending_clarification->id}});
    ctx.decide().withdrawn_clarification_id = ctx.session.pending_clarification->id;
    ctx.session.pending_clarification.reset();
  }
  if (ctx.session.pending_approval) {
    ctx.Emit("approval.cancelled", {{"id", ctx.session.pending_approval->id}});
    ctx.decide().cancelled_approval_id = ctx.session.pending_approval->id;
    ctx.session.pending_approval.reset();
  }
  ctx.session.pending_plan.clear();
  if (ctx.config.floor.enabled) {
    ctx.ChangeLease(Lease{});
    ctx.Emit("lease.released", {{"owner", ctx.lease().owner}, {"domain", ctx.lease().domain}, {"reason", "cancelled"}});
  }
  ctx.result.reply = "Okay, I've stopped that.";
  if (ctx.input.say) {  // a spoken "stop" belongs to the conversation; an API cancel does not
    ctx.Append(Message::User(*ctx.input.say, ctx.input.speaker));
    ctx.Append(Message::Assistant(ctx.result.reply));
  }
  ctx.Emit("turn.cancelled", {{"speaker", ctx.input.speaker}});
}

void TurnPipeline::EndTurn(TurnContext& ctx, const TurnPhaseMachine& phase) {
  policies_.OnTurnEnd(ctx);
  Close(ctx, phase);
}

// The last event of every turn: its status and the phase it ended in. A transition the
// phase table refused (a bug in the pipeline) failed the turn; it goes on the record
// first.
void TurnPipeline::Close(TurnContext& ctx, const TurnPhaseMachine& phase) {
  if (!phase.violation().empty()) ctx.Emit("turn.failed", {{"error", phase.violation()}});
  ctx.Emit("turn.completed", TurnCompletedData(ctx.result.status, phase.phase()));
}

Status TurnPipeline::Admit(TurnContext& ctx) {
  const TurnInput& in = ctx.input;  // well formed: Runtime::RunTurn checked it
  HeapOptional<PendingApproval>& approval = ctx.session.pending_approval;
  if (in.approve) return AnswerApproval(ctx);
  if (approval) {
    // A pending approval holds the session: nothing new reaches the model until the
    // person decides (or, with floor control on, cancels).
    return FailedPrecondition("an approval is pending (" + approval->prompt +
                              "): answer it with approve: true or approve: false first");
  }
  HeapOptional<PendingClarification>& pending = ctx.session.pending_clarification;
  if (in.select) {
    if (!pending) return FailedPrecondition("there is no pending clarification to answer with select");
    const ClarificationOption* chosen = nullptr;
    std::string ids;
    for (const ClarificationOption& o : pending->clarification.options) {
      if (o.id == *in.select) chosen = &o;
      ids += (ids.empty() ? "" : ", ") + o.id;
    }
    if (chosen == nullptr) {
      return InvalidArgument("'" + *in.select + "' is not one of the pending options (" + ids + ")");
    }
    PendingDecisions& d = ctx.decide();
    d.chosen_option_id = chosen->id;
    const std::string chosen_title = chosen->title;
    d.answered = std::make_unique<PendingClarification>(std::move(*pending));
    pending.reset();
    ctx.request_tools = d.answered->request_tools;
    policies_.OnClarificationAnswered(ctx, *d.answered, d.chosen_option_id);
    ctx.Emit("clarification.answered", {{"id", d.answered->id},
                                        {"option_id", d.chosen_option_id},
                                        {"title", chosen_title},
                                        {"entity_type", d.answered->entity_type},
                                        {"tool", d.answered->tool}});
    return {};
  }
  if (!ctx.session.pending_plan.empty()) {
    // A new request: the paused plan is abandoned, not resumed.
    ctx.Emit("plan.abandoned", {{"step", ctx.session.pending_plan[ctx.session.pending_plan_step].id}});
    ctx.session.pending_plan.clear();
  }
  if (pending) {
    // A new request instead of an answer: the old question no longer applies.
    ctx.Emit("clarification.superseded", {{"id", pending->id}});
    ctx.decide().withdrawn_clarification_id = pending->id;
    pending.reset();
  }
  return {};
}

namespace {

// What a refused call leaves: a rejection in the trace and the record, and an error
// result in history (its one result, I10), which ends the chain.
ChainOutcome RecordDenial(TurnContext& ctx, const ToolCall& call) {
  ToolOutcome o;
  o.call_id = call.id;
  o.name = call.name;
  o.args = call.args;
  o.status = ToolOutcome::Status::kRejected;
  o.reason = "denied";
  o.message = "denied by user";
  // What the person said with the denial reaches the model (docs/human-in-the-loop.md).
  const std::string& said = ctx.decisions().approval_answer.message;
  if (!said.empty()) o.message += ": " + said;
  ctx.Emit("tool.rejected", {{"call_id", call.id}, {"name", call.name}, {"args", call.args},
                             {"response", ctx.response_index}, {"position", 0}, {"reason", "denied"},
                             {"message", o.message}});
  Json content = {{"success", false}, {"next_action", "error"}, {"error", "rejected: " + o.message}};
  ctx.Append(Message::Tool(call.id, call.name, content.dump(), true));
  ctx.result.tools.push_back(std::move(o));
  return ChainOutcome{ChainStop::kError, {}, {}};
}

}  // namespace

// The history gets what the person said, or, for a turn that answers what a policy
// paused, the policy's note and the paused call as its own call/result pair.
std::optional<Resumption> TurnPipeline::BuildContext(TurnContext& ctx) {
  ctx.resumes_questions = &resumes_questions_;
  std::optional<Resumption> resumption = policies_.Resume(ctx);
  if (!resumption) {
    ctx.Append(Message::User(*ctx.input.say, ctx.input.speaker));
    return std::nullopt;
  }
  ctx.Append(Message::User(resumption->note, ctx.input.speaker));
  if (!resumption->call) return std::nullopt;
  ctx.Append(Message::Assistant("", {*resumption->call}));
  return resumption;
}

Task<ChainOutcome> TurnPipeline::Resume(TurnContext& ctx, std::unique_ptr<Resumption> resumption) {
  if (resumption->denied) co_return RecordDenial(ctx, *resumption->call);
  std::vector<ToolCall> calls;
  calls.push_back(std::move(*resumption->call));
  co_return co_await executor_.Run(ctx, calls, std::move(resumption->answer));
}

void TurnPipeline::PresentApproval(TurnContext& ctx, PendingApproval approval, TurnPhaseMachine& phase) {
  phase.Enter(TurnPhase::kAwaitingApproval);
  if (approval.prompt.empty()) {  // the tool's approval rule: the call in words, never as JSON
    const ToolDef* tool = ctx.FindTool(approval.tool);
    approval.prompt = tool != nullptr ? ApprovalQuestion(*tool, approval.args, &ctx.session.entities)
                                      : "Should I go ahead with \u201c" + DefaultToolTitle(approval.tool) + "\u201d? (approve or deny)";
  }
  ctx.Append(Message::Assistant(approval.prompt));
  ctx.result.reply = Told(ctx, WithUncertainWrites(ctx, approval.prompt));
  ctx.result.approval = approval;
  ctx.Emit("approval", PendingApprovalToJson(approval));
  if (SentSome(ctx)) ctx.Emit("reply.final", ReplyFinal(ctx));
  ctx.session.pending_approval = std::move(approval);
}

std::optional<std::string> TurnPipeline::Preempt(TurnContext& ctx) {
  if (ctx.input.cancel) return std::nullopt;
  return policies_.Preempt(ctx);
}

// The safety override's turn: whoever speaks and whatever is pending (a lease, a
// clarification, an approval), the person gets the fixed message verbatim and the flag
// is queued. It leaves the lease and what is pending exactly as they were: no admission,
// no OnTurnEnd. A speaker the floor keeps out leaves no trace in the model's history
// either (their words reach no model, later ones included); notices wait for a reply
// the session's people are reading.
void TurnPipeline::AnswerCrisis(TurnContext& ctx, std::string answer, TurnPhaseMachine& phase) {
  executor_.Queue(ctx);
  const bool outsider = ctx.config.floor.enabled && ctx.lease().ActiveAt(ctx.clock.NowMs()) &&
                        ctx.lease().owner != ctx.input.speaker;
  if (!outsider) {
    ctx.Append(Message::User(*ctx.input.say, ctx.input.speaker));
    ctx.Append(Message::Assistant(answer));
  }
  if (!ctx.extras().pending_notices.empty()) ctx.extend().pending_notices.clear();
  Deliver(ctx, std::move(answer), phase);  // verbatim: rails never edit a safety message
  Close(ctx, phase);
}

}  // namespace reins
