#include "pipeline/turn_pipeline.h"

#include "pipeline/event_text.h"
#include "policy/approval/approval_answer.h"
#include "policy/approval/approval_words.h"
#include "policy/approval/standing_permissions.h"
#include "policy/registry.h"

#include <algorithm>
#include <cctype>

namespace reins {

namespace {

// What the person is told of each write whose outcome is unknown (WriteLedger: an
// earlier try of it was interrupted and it was not run again, or it did not answer in
// time), whatever the model wrote: that it may or may not have happened. Appended to
// `reply` unless it says so already.
std::string WithUncertainWrites(const TurnContext& ctx, std::string reply) {
  for (const ToolOutcome& t : ctx.result.tools) {
    if (t.reason != "uncertain") continue;
    const ToolDef* tool = ctx.FindTool(t.name);
    const std::string title = tool != nullptr && !tool->title.empty() ? tool->title : DefaultToolTitle(t.name);
    // Skipped: an earlier try of the turn was interrupted; executed: it did not answer in time.
    const std::string why = t.status == ToolOutcome::Status::kSkipped ? "it was interrupted while it ran"
                                                                      : "it did not answer in time";
    const std::string note =
        "I can't tell whether the " + title + " went through: " + why + ". Please check before asking for it again.";
    if (reply.find(note) != std::string::npos) continue;
    if (!reply.empty() && !std::isspace(static_cast<unsigned char>(reply.back()))) reply += ' ';
    reply += note;
  }
  return reply;
}

// Where a streamed reply's own text begins: after the notices sent in front of it.
struct StreamFront {
  size_t notices = 0;
};

// The turn's live reply stream once it has sent something; null otherwise.
const ReplyStream* SentSome(const TurnContext& ctx) {
  const ReplyStream* stream = ctx.live_stream();
  return stream != nullptr && !stream->sent().empty() ? stream : nullptr;
}

// What a stream sent of the model's own text: without the notices in front of it.
std::string OwnText(TurnContext& ctx, const std::string& sent) {
  return sent.substr(std::min(ctx.Slot<StreamFront>().notices, sent.size()));
}

// This turn's last message is the model's answer to the person (not a call of tools):
// what the person was told is written over it rather than after it.
bool EndsWithAnswer(const TurnContext& ctx) {
  const std::vector<Message>& history = ctx.history();
  return history.size() > ctx.history_base && history.back().role == Role::kAssistant &&
         history.back().tool_calls.empty();
}

void EraseLeadingSpace(std::string& text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.erase(0, 1);
}

}  // namespace

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

PolicyChain::RailFired TurnPipeline::RailsFiredIn(TurnContext& ctx) const {
  return [&ctx](std::string_view rail, const std::string& before, const std::string& after) {
    // Once per rail, even if the audit's rewrite (or an earlier sentence) already named it.
    if (std::find(ctx.result.rails.begin(), ctx.result.rails.end(), rail) == ctx.result.rails.end()) {
      ctx.result.rails.emplace_back(rail);
    }
    ctx.Emit("rail.fired", {{"rail", rail}, {"before", before}, {"after", after}});
  };
}

std::string TurnPipeline::Review(TurnContext& ctx, std::string reply) {
  return policies_.ReviewReply(ctx, std::move(reply), RailsFiredIn(ctx));
}

// A turn whose caller streams gets a reply stream: live when every judge of the reply
// can judge it sentence by sentence, else held, and the first event says which.
Json TurnPipeline::OpenStream(TurnContext& ctx) {
  if (!ctx.streamed || !ctx.streamed->send_reply_text) return nullptr;
  std::string held_by = reply_held_by_;
  Json reply = held_by.empty() ? Json{{"stream", "sentences"}} : Json{{"stream", "whole"}, {"held_by", held_by}};
  ctx.streamed->reply_stream = std::make_unique<ReplyStream>(
      ctx.streamed->send_reply_text,
      [this, &ctx](const std::string& sent, std::string sentence) { return Judge(ctx, sent, std::move(sentence)); },
      [this, &ctx](const std::string& sentence) { return policies_.Waits(ctx, sentence); }, std::move(held_by));
  return reply;
}

std::string TurnPipeline::Judge(TurnContext& ctx, const std::string& sent, std::string sentence) {
  const bool blank = std::all_of(sentence.begin(), sentence.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
  if (blank) return sent.empty() ? "" : sentence;  // line breaks between sentences pass; none lead
  std::string judged = policies_.ReviewSentence(ctx, OwnText(ctx, sent), std::move(sentence), RailsFiredIn(ctx));
  if (judged.empty() || !sent.empty()) return judged;
  // The first sentence out: notices from earlier background failures go in front.
  EraseLeadingSpace(judged);
  const std::string notices = WithNotices(ctx, "", false);
  ctx.Slot<StreamFront>().notices = notices.size();
  return notices + judged;
}

std::string TurnPipeline::Told(TurnContext& ctx, std::string rest) {
  const ReplyStream* stream = SentSome(ctx);
  if (stream == nullptr) return WithNotices(ctx, std::move(rest));
  const std::string& sent = stream->sent();
  EraseLeadingSpace(rest);
  if (rest.empty()) return sent;
  return sent + (std::isspace(static_cast<unsigned char>(sent.back())) ? "" : " ") + rest;
}

// The reply as a whole; for a streamed one, how much of it the person already has.
EventData TurnPipeline::ReplyFinal(const TurnContext& ctx) {
  const ReplyStream* stream = SentSome(ctx);
  return ReplyFinalData(ctx.result.reply, stream != nullptr ? std::optional<size_t>(stream->sent().size()) : std::nullopt);
}

// Notices from earlier background failures go in front of the next reply, once.
std::string TurnPipeline::WithNotices(TurnContext& ctx, std::string reply, bool into_history) {
  if (ctx.extras().pending_notices.empty()) return reply;
  TurnContext::Extras& extras = ctx.extend();
  std::string front;
  for (const auto& [id, text] : extras.pending_notices) {
    front += (front.empty() ? "" : " ") + text;
    ctx.result.notices.push_back(text);
    if (id > 0) extras.delivered_notices.push_back(id);  // 0: the runtime's own (a lapsed approval), not stored
    ctx.Emit("notice", {{"id", id}, {"text", text}});
  }
  extras.pending_notices.clear();
  // The model's history says what the person was told, notices included (a streamed
  // reply's first sentence is not in history yet: it gets them with the rest).
  if (into_history && !ctx.history().empty() && ctx.history().back().role == Role::kAssistant) {
    Message& last = ctx.EditMessage(ctx.history().size() - 1);
    last.text = front + "\n\n" + last.text;
  }
  return front + "\n\n" + reply;
}

void TurnPipeline::Present(TurnContext& ctx, PendingClarification pending, TurnPhaseMachine& phase) {
  phase.Enter(TurnPhase::kAwaitingClarification);
  // The system asks, not the model: the options keep their real ids.
  ctx.Append(Message::Assistant(pending.clarification.question));
  ctx.result.reply = Told(ctx, WithUncertainWrites(ctx, pending.clarification.question));
  Json c = ClarificationToJson(pending.clarification);
  c["id"] = pending.id;
  c["tool"] = pending.tool;
  c["entity_type"] = pending.entity_type;
  ctx.Emit("clarification", std::move(c));
  // A question after streamed text (a preamble): the deltas still add up to the reply.
  if (SentSome(ctx)) ctx.Emit("reply.final", ReplyFinal(ctx));
  ctx.result.clarification = pending;
  ctx.session.pending_clarification = std::move(pending);
}

void TurnPipeline::Deliver(TurnContext& ctx, std::string reply, TurnPhaseMachine& phase) {
  DeliverWhole(ctx, Told(ctx, std::move(reply)), phase);
}

void TurnPipeline::DeliverWhole(TurnContext& ctx, std::string whole, TurnPhaseMachine& phase) {
  phase.Enter(TurnPhase::kDelivering);
  ctx.result.reply = std::move(whole);
  ctx.Emit("reply.final", ReplyFinal(ctx));
  phase.Enter(TurnPhase::kCompleted);
}

void TurnPipeline::Fail(TurnContext& ctx, const std::string& why, TurnPhaseMachine& phase) {
  phase.Enter(TurnPhase::kFailed);
  WithdrawDeferred(ctx, "turn_failed");
  ctx.result.error = why;
  ctx.result.reply = Told(ctx, WithUncertainWrites(ctx, "Sorry, I could not complete that request just now."));
  if (SentSome(ctx)) ctx.Emit("reply.final", ReplyFinal(ctx));
  // What the person was told closes the turn in history too, so the next model call
  // never sees this turn's message as a request still waiting for an answer.
  if (EndsWithAnswer(ctx)) {
    ctx.EditMessage(ctx.history().size() - 1).text = ctx.result.reply;
  } else if (ctx.history().size() > ctx.history_base) {
    ctx.Append(Message::Assistant(ctx.result.reply));
  }
  ctx.Emit("turn.failed", {{"error", why}});
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
