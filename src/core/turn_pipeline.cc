#include "core/turn_pipeline.h"

namespace reins {

TurnPipeline::TurnPipeline(const AgentConfig& config, ModelProvider& model, const ToolRouter& tools)
    : policies_(BuildPolicyChain(config)), executor_(policies_, tools), loop_(config, policies_, model, executor_) {}

bool TurnPipeline::Gate(TurnContext& ctx, TurnPhaseMachine& phase) {
  AdmitVerdict verdict;
  for (const auto& policy : policies_) {
    verdict = policy->Admit(ctx);
    if (verdict.kind != AdmitVerdict::Kind::kAdmit) break;
  }
  if (verdict.kind == AdmitVerdict::Kind::kBlock) {
    // Reaches neither the model nor any tool, and leaves no trace in the model's history.
    (void)phase.Advance(TurnPhase::kBlocked);
    ctx.result.status = TurnStatus::kBlocked;
    ctx.result.blocked_reason = verdict.reason;
    ctx.Emit("turn.blocked", {{"reason", verdict.reason}});
    return true;
  }
  if (verdict.kind == AdmitVerdict::Kind::kCancel) {
    (void)phase.Advance(TurnPhase::kCancelled);
    if (ctx.session.pending_clarification) {
      ctx.Emit("clarification.cancelled", {{"id", ctx.session.pending_clarification->id}});
      ctx.withdrawn_clarification_id = ctx.session.pending_clarification->id;
      ctx.session.pending_clarification.reset();
    }
    ctx.lease_change = Lease{};
    ctx.Emit("lease.released", {{"owner", ctx.lease.owner}, {"domain", ctx.lease.domain}, {"reason", "cancelled"}});
    ctx.result.status = TurnStatus::kCancelled;
    ctx.result.reply = "Okay, I've stopped that.";
    ctx.history.push_back(Message::User(ctx.input.say.value_or(""), ctx.input.speaker));
    ctx.history.push_back(Message::Assistant(ctx.result.reply));
    ctx.Emit("turn.cancelled", {{"speaker", ctx.input.speaker}});
    return true;
  }
  return false;
}

void TurnPipeline::EndTurn(TurnContext& ctx, const TurnPhaseMachine& phase) {
  for (const auto& policy : policies_) policy->OnTurnEnd(ctx);
  ctx.Emit("turn.completed", {{"status", TurnStatusName(ctx.result.status)}, {"phase", TurnPhaseName(phase.phase())}});
}

Result<void> TurnPipeline::Admit(TurnContext& ctx) {
  const TurnInput& in = ctx.input;
  int given = (in.say ? 1 : 0) + (in.select ? 1 : 0) + (in.approve ? 1 : 0);
  if (given != 1) return InvalidArgument("a turn needs exactly one of say, select or approve");
  if (in.approve) return Unimplemented("approvals are not supported yet: no tool in this build pauses for approval");
  std::optional<PendingClarification>& pending = ctx.session.pending_clarification;
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
    ctx.chosen_option_id = chosen->id;
    ctx.answered = std::move(pending);
    pending.reset();
    ctx.user_text = ctx.answered->request_text;
    for (const auto& policy : policies_) policy->OnClarificationAnswered(ctx, *ctx.answered, ctx.chosen_option_id);
    ctx.Emit("clarification.answered", {{"id", ctx.answered->id},
                                        {"option_id", ctx.chosen_option_id},
                                        {"entity_type", ctx.answered->entity_type},
                                        {"tool", ctx.answered->tool}});
    return {};
  }
  if (pending) {
    // A new request instead of an answer: the old question no longer applies.
    ctx.Emit("clarification.superseded", {{"id", pending->id}});
    ctx.withdrawn_clarification_id = pending->id;
    pending.reset();
  }
  ctx.user_text = *in.say;
  return {};
}

void TurnPipeline::BuildContext(TurnContext& ctx) {
  if (ctx.answered) {
    const ClarificationOption* chosen = nullptr;
    for (const ClarificationOption& o : ctx.answered->clarification.options) {
      if (o.id == ctx.chosen_option_id) chosen = &o;
    }
    ctx.history.push_back(Message::User("The user chose \"" + chosen->title + "\" (id " + chosen->id +
                                            ") in answer to \"" + ctx.answered->clarification.question +
                                            "\". Continue the original request with this choice.",
                                        ctx.input.speaker));
    return;
  }
  ctx.history.push_back(Message::User(*ctx.input.say, ctx.input.speaker));
}

std::optional<std::string> TurnPipeline::Preempt(TurnContext& ctx) {
  for (const auto& policy : policies_) {
    if (std::optional<std::string> reply = policy->Preempt(ctx)) return reply;
  }
  return std::nullopt;
}

std::string TurnPipeline::Review(TurnContext& ctx, std::string reply) {
  for (const auto& policy : policies_) {
    std::string before = reply;
    if (!policy->ReviewReply(ctx, reply)) continue;
    ctx.result.rails.emplace_back(policy->Name());
    ctx.Emit("rail.fired", {{"rail", policy->Name()}, {"before", before}, {"after", reply}});
  }
  return reply;
}

// Notices from earlier background failures go in front of the next reply, once.
std::string TurnPipeline::WithNotices(TurnContext& ctx, std::string reply) {
  if (ctx.pending_notices.empty()) return reply;
  std::string front;
  for (const auto& [id, text] : ctx.pending_notices) {
    front += (front.empty() ? "" : " ") + text;
    ctx.result.notices.push_back(text);
    ctx.delivered_notices.push_back(id);
    ctx.Emit("notice", {{"id", id}, {"text", text}});
  }
  ctx.pending_notices.clear();
  return front + "\n\n" + reply;
}

void TurnPipeline::Present(TurnContext& ctx, PendingClarification pending, TurnPhaseMachine& phase) {
  (void)phase.Advance(TurnPhase::kAwaitingClarification);
  // The system asks, not the model: the options keep their real ids.
  ctx.history.push_back(Message::Assistant(pending.clarification.question));
  ctx.result.status = TurnStatus::kAwaitingClarification;
  ctx.result.reply = WithNotices(ctx, pending.clarification.question);
  Json c = ClarificationToJson(pending.clarification);
  c["id"] = pending.id;
  c["tool"] = pending.tool;
  c["entity_type"] = pending.entity_type;
  ctx.Emit("clarification", std::move(c));
  ctx.result.clarification = pending;
  ctx.session.pending_clarification = std::move(pending);
}

void TurnPipeline::Deliver(TurnContext& ctx, std::string reply, TurnPhaseMachine& phase) {
  (void)phase.Advance(TurnPhase::kDelivering);
  ctx.result.reply = WithNotices(ctx, std::move(reply));
  ctx.Emit("reply.final", {{"text", ctx.result.reply}});
  (void)phase.Advance(TurnPhase::kCompleted);
  ctx.result.status = TurnStatus::kCompleted;
}

void TurnPipeline::Fail(TurnContext& ctx, const std::string& why, TurnPhaseMachine& phase) {
  (void)phase.Advance(TurnPhase::kFailed);
  ctx.result.status = TurnStatus::kFailed;
  ctx.result.error = why;
  ctx.result.reply = "Sorry, I could not complete that request just now.";
  ctx.Emit("turn.failed", {{"error", why}});
}

Task<Result<void>> TurnPipeline::Run(TurnContext& ctx) {
  TurnPhaseMachine phase;
  // Emitted first; if admission refuses the input, the whole turn is discarded.
  ctx.Emit("turn.started", {{"turn_id", ctx.turn_id}, {"speaker", ctx.input.speaker}, {"input", TurnInputToJson(ctx.input)}});
  if (Gate(ctx, phase)) {
    ctx.Emit("turn.completed", {{"status", TurnStatusName(ctx.result.status)}, {"phase", TurnPhaseName(phase.phase())}});
    co_return Result<void>{};
  }
  if (Result<void> admitted = Admit(ctx); !admitted.ok()) co_return admitted;
  BuildContext(ctx);
  if (std::optional<std::string> answer = Preempt(ctx)) {
    ctx.history.push_back(Message::Assistant(*answer));
    Deliver(ctx, std::move(*answer), phase);  // verbatim: rails never edit a safety message
    EndTurn(ctx, phase);
    co_return Result<void>{};
  }
  (void)phase.Advance(TurnPhase::kRunningModel);

  LoopOutcome outcome = co_await loop_.Run(ctx, phase);
  switch (outcome.kind) {
    case LoopOutcome::Kind::kClarification:
      Present(ctx, std::move(*outcome.clarification), phase);
      break;
    case LoopOutcome::Kind::kReply: {
      (void)phase.Advance(TurnPhase::kReviewing);
      std::string reviewed = Review(ctx, std::move(outcome.text));
      // History keeps what the person was told, so the next turn's model sees it too.
      if (!ctx.history.empty() && ctx.history.back().role == Role::kAssistant) ctx.history.back().text = reviewed;
      Deliver(ctx, std::move(reviewed), phase);
      break;
    }
    case LoopOutcome::Kind::kFailed:
      Fail(ctx, outcome.text, phase);
      break;
  }
  EndTurn(ctx, phase);
  co_return Result<void>{};
}

}  // namespace reins
