#include "pipeline/turn_pipeline.h"

#include "pipeline/event_text.h"
#include "pipeline/reply_text.h"
#include "policy/approval/approval_answer.h"
#include "policy/registry.h"

namespace reins {

using namespace reply_text;

TurnPipeline::TurnPipeline(const AgentConfig& config, ModelProvider& model, ModelProvider& audit_model,
                           const ToolRouter& tools, WriteLedger& writes)
    : policies_(BuildPolicyChain(config)),
      executor_(policies_, tools, writes),
      loop_(config, policies_, model, audit_model, executor_),
      plan_(loop_),
      audit_(config, loop_, executor_),
      plan_mode_(config.plan.enabled),
      audit_on_(config.audit.enabled),
      reply_held_by_(ReplyHeldBy(config, policies_)),
      withheld_(WithheldTools(config)),
      tools_(tools),
      resumes_questions_([&tools](const std::string& tool) { return tools.ResumesQuestions(tool); }) {}

std::string ReplyHeldBy(const AgentConfig& config, const PolicyChain& policies) {
  if (config.audit.enabled) return "audit.enabled";  // its verdict is on the whole reply and trace
  if (config.plan.enabled) return "plan.enabled";    // the reply is the synthesis of every step
  if (std::string_view rail = policies.WholeReplyRail(); !rail.empty()) return "rails." + std::string(rail);
  return "";
}

// A failed turn tells the person it could not complete the request, and a refusal that
// it cannot help, so the writes the turn queued must not run behind that reply (nothing
// half-done): they are withdrawn before the outbox is written, the history says so (the
// model does not later claim them), and a plan step that queued one records it.
void TurnPipeline::WithdrawDeferred(TurnContext& ctx, const std::string& reason) {
  const std::string why = reason == "refused" ? "not run: the request was refused" : "not run: the turn failed before a reply";
  for (ToolOutcome& t : ctx.result.tools) {
    if (t.status != ToolOutcome::Status::kDeferred) continue;
    t.status = ToolOutcome::Status::kSkipped;
    t.reason = reason;
    t.message = why;
    for (PlanStep& step : ctx.result.plan) {
      for (PlanStep::Write& w : step.deferred_writes) {
        if (w.key == t.idempotency_key) w.outcome = "withdrawn";
      }
    }
    ctx.Emit("tool.skipped", {{"name", t.name}, {"call_id", t.call_id}, {"reason", t.reason},
                              {"idempotency_key", t.idempotency_key}});
    for (size_t i = 0; i < ctx.history().size(); ++i) {
      const Message& said = ctx.history()[i];
      if (said.role == Role::kTool && said.tool_call_id == t.call_id) {
        Message& m = ctx.EditMessage(i);
        m.text = Json{{"success", false}, {"next_action", "error"}, {"error", why}}.dump();
        m.is_error = true;
      }
    }
  }
}

std::optional<Status> TurnPipeline::Open(TurnContext& ctx, TurnPhaseMachine& phase,
                                         std::unique_ptr<Resumption>& resumption) {
  // Emitted first; if admission refuses the input, the whole turn is discarded.
  const Json reply = OpenStream(ctx);
  ctx.Emit("turn.started", TurnStartedData(ctx.result.turn_id, ctx.input, reply, withheld_));
  // A crisis message is answered before anything else may refuse or hold it (I6).
  if (std::optional<std::string> answer = Preempt(ctx)) {
    ctx.admitted = true;
    AnswerCrisis(ctx, std::move(*answer), phase);
    return OkStatus();
  }
  if (Gate(ctx, phase)) {
    ctx.admitted = true;
    Close(ctx, phase);
    return OkStatus();
  }
  // An approval that waited past its ttl_s is withdrawn before anything reads it; the
  // person hears of it in this turn's reply.
  if (std::optional<std::string> lapsed = LapseApproval(ctx)) {
    if (ctx.input.approve) {
      ctx.admitted = true;
      AnswerLapsed(ctx, std::move(*lapsed), phase);
      Close(ctx, phase);
      return OkStatus();
    }
    ctx.extend().pending_notices.emplace_back(0, std::move(*lapsed));
  }
  if (Status admitted = Admit(ctx); !admitted.ok()) return admitted;
  ctx.admitted = true;
  if (std::optional<Resumption> decided = BuildContext(ctx)) resumption = std::make_unique<Resumption>(std::move(*decided));
  phase.Enter(TurnPhase::kRunningModel);
  return std::nullopt;
}

namespace {

// The turn ended before its model was asked.
Task<Status> Ended(Status status) { co_return status; }

}  // namespace

Task<Status> TurnPipeline::Run(TurnContext& ctx, TurnPhaseMachine& phase) {
  std::unique_ptr<Resumption> resumption;
  if (std::optional<Status> ended = Open(ctx, phase, resumption)) return Ended(std::move(*ended));
  // Each mode in a coroutine of its own, and the resumed call in one that ends before
  // the model is asked: a frame holds every value it may ever hold (GCC keeps each
  // local and each awaited result), for as long as the turn waits on its model.
  if (plan_mode_) return RunPlan(ctx, phase, std::move(resumption));
  return RunLoop(ctx, phase, std::move(resumption));
}

Task<Status> TurnPipeline::RunLoop(TurnContext& ctx, TurnPhaseMachine& phase, std::unique_ptr<Resumption> resumption) {
  if (resumption) {
    const bool ended = co_await ResumeFirst(ctx, phase, std::move(resumption));
    if (ended) co_return OkStatus();
  }
  static const ToolChoice kAuto = ToolChoice::Auto();  // not a temporary in this frame (ModelLoop::Run)
  std::unique_ptr<LoopOutcome> outcome = co_await loop_.Run(ctx, phase, kAuto);
  co_await Finish(ctx, std::move(*outcome), phase, audit_on_);
  EndTurn(ctx, phase);
  co_return OkStatus();
}

Task<Status> TurnPipeline::RunPlan(TurnContext& ctx, TurnPhaseMachine& phase, std::unique_ptr<Resumption> resumption) {
  // The decided call of a paused step belongs to that step, whose loop concludes it.
  const bool in_plan = !ctx.session.pending_plan.empty();
  std::optional<ChainOutcome> replay;
  if (resumption && in_plan) {
    phase.Enter(TurnPhase::kExecutingTools);
    replay = co_await Resume(ctx, std::move(resumption));
  } else if (resumption) {
    const bool ended = co_await ResumeFirst(ctx, phase, std::move(resumption));
    if (ended) co_return OkStatus();
  }
  LoopOutcome outcome = co_await plan_.Run(ctx, phase, std::move(replay));
  co_await Finish(ctx, std::move(outcome), phase, audit_on_);
  EndTurn(ctx, phase);
  co_return OkStatus();
}

// The person decided on an approval, or answered a question a call asked mid-call: that
// very call runs (again) before the model is asked anything, and its result stops the
// turn exactly as in the loop (I1). True when it ended the turn.
Task<bool> TurnPipeline::ResumeFirst(TurnContext& ctx, TurnPhaseMachine& phase, std::unique_ptr<Resumption> resumption) {
  phase.Enter(TurnPhase::kExecutingTools);
  ChainOutcome replay = co_await Resume(ctx, std::move(resumption));
  std::optional<LoopOutcome> stopped = co_await loop_.Conclude(ctx, phase, std::move(replay));
  if (!stopped) co_return false;
  co_await Finish(ctx, std::move(*stopped), phase, audit_on_);
  EndTurn(ctx, phase);
  co_return true;
}

Task<void> TurnPipeline::Finish(TurnContext& ctx, LoopOutcome&& outcome, TurnPhaseMachine& phase, bool audit) {
  switch (outcome.kind) {
    case LoopOutcome::Kind::kClarification:
      Present(ctx, std::move(*outcome.clarification), phase);
      co_return;
    case LoopOutcome::Kind::kApproval:
      PresentApproval(ctx, std::move(*outcome.approval), phase);
      co_return;
    case LoopOutcome::Kind::kFailed:
      Fail(ctx, outcome.text, phase);
      co_return;
    case LoopOutcome::Kind::kRefusal:
      // Plain and fixed: no audit or rail rewrites it, and nothing the turn queued runs.
      WithdrawDeferred(ctx, "refused");
      phase.Enter(TurnPhase::kReviewing);
      Deliver(ctx, std::move(outcome.text), phase);
      co_return;
    case LoopOutcome::Kind::kReply:
      break;
  }
  phase.Enter(TurnPhase::kReviewing);
  std::string candidate = std::move(outcome.text);
  if (audit) {
    LoopOutcome audited = co_await audit_.Run(ctx, phase, candidate);
    // The audit's gather round ran into a question, an approval or a refusal, or the
    // turn ran out of time: that ends the turn as it would have in the loop.
    if (audited.kind != LoopOutcome::Kind::kReply) co_return co_await Finish(ctx, std::move(audited), phase, false);
    candidate = std::move(audited.text);
    phase.Enter(TurnPhase::kReviewing);  // back from a gather round, if one ran
  }
  std::string reviewed;
  std::string told;  // what this response's message in history says the person was told
  ReplyStream* stream = ctx.live_stream();
  if (stream != nullptr) {
    stream->Release();  // the reply's calls have all run: what waited for them is judged
    // The sentences are out; the rails may only append now.
    std::string closing = policies_.CloseReply(ctx, OwnText(ctx, stream->sent()), RailsFiredIn(ctx));
    reviewed = Told(ctx, WithUncertainWrites(ctx, std::move(closing)));
    told = reviewed.substr(std::min(stream->response_start(), reviewed.size()));
  } else {
    reviewed = WithUncertainWrites(ctx, Review(ctx, std::move(candidate)));
    told = reviewed;
  }
  // History keeps what the person was told, so the next turn's model sees it too.
  if (EndsWithAnswer(ctx)) {
    ctx.EditMessage(ctx.history().size() - 1).text = told;
  } else {
    ctx.Append(Message::Assistant(told));
  }
  if (stream != nullptr) {
    DeliverWhole(ctx, std::move(reviewed), phase);
  } else {
    Deliver(ctx, std::move(reviewed), phase);
  }
}

}  // namespace reins
