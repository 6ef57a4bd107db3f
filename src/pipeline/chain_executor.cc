#include "pipeline/chain_executor.h"

#include <algorithm>
#include <utility>

#include "domain/json_text.h"
#include "domain/entities.h"
#include "pipeline/event_text.h"
#include "policy/approval/approval_words.h"
#include "telemetry/turn_spans.h"
#include "tools/timed_invoke.h"

namespace reins {
namespace {

Json CallEventData(const TurnContext& ctx, const ProposedCall& p) {
  return JsonObject("call_id", p.call->id, "name", p.call->name, "args",
                    p.call->args_valid ? p.call->args : Json(p.call->arguments_text), "response", ctx.response_index,
                    "position", p.position);
}

std::string IdempotencyKey(const TurnContext& ctx, int position) {
  return ctx.result.turn_id + ":" + std::to_string(ctx.response_index) + ":" + std::to_string(position);
}

std::string ErrorContent(const std::string& error) {
  return Json{{"success", false}, {"next_action", "error"}, {"error", error}}.dump();
}

ToolOutcome BaseOutcome(const TurnContext& ctx, const ProposedCall& p, ToolOutcome::Status status) {
  ToolOutcome o;
  o.call_id = p.call->id;
  o.name = p.call->name;
  o.args = p.call->args_valid ? p.call->args : Json(p.call->arguments_text);
  o.status = status;
  o.response_index = ctx.response_index;
  o.position = p.position;
  o.step_id = ctx.step_id;
  return o;
}

}  // namespace

Task<ResultEnvelope> ChainExecutor::Execute(TurnContext& ctx, const ProposedCall& p, const Json& answer,
                                            int64_t* latency_ms, const std::string& write_key, bool* timed_out) {
  ToolBackend* backend = tools_.Find(p.tool->name);
  if (backend == nullptr) co_return ResultEnvelope::Failure("tool " + p.tool->name + " has no backend configured");
  std::string key = write_key.empty() ? IdempotencyKey(ctx, p.position) : write_key;
  ToolRequest request{p.tool->name, p.call->args, std::string(ctx.session_id), ctx.result.turn_id,
                      std::move(key.append(ctx.key_salt))};
  // The tool's own timeout, or what is left of the turn's budget if that ends sooner.
  const int64_t budget = std::min<int64_t>(p.tool->timeout_ms, ctx.RemainingMs());
  request.timeout_ms = budget;
  if (backend->ForwardsTraceContext()) {
    const telemetry::TurnIds ids = telemetry::IdsOfTurn(ctx.session_id, ctx.result.turn_number, ctx.input.traceparent);
    request.traceparent = telemetry::FormatTraceparent(
        {ids.turn.trace_id, telemetry::ToolSpanId(ids, ctx.response_index, p.position), ids.turn.sampled});
  }
  request.on_progress = [&ctx, &p](const Json& progress) {
    Json data = {{"call_id", p.call->id}, {"name", p.call->name}};
    for (const char* key : {"progress", "total", "message"}) {
      if (progress.contains(key)) data[key] = progress[key];
    }
    ctx.Emit("tool.progress", std::move(data));
  };
  request.may_ask = true;
  request.answer = answer;
  int64_t start = ctx.clock.NowMs();
  std::optional<Result<Json>> called = co_await InvokeWithin(*backend, request, ctx.clock);
  *latency_ms = ctx.clock.NowMs() - start;
  if (!called) {
    if (timed_out != nullptr) *timed_out = true;
    const bool turn_ran_out = budget < p.tool->timeout_ms;
    co_return ResultEnvelope::Failure("timed out after " + std::to_string(budget) + " ms" +
                                      (turn_ran_out ? " (the turn's limits.turn_timeout_ms ran out)" : ""));
  }
  Result<Json>& raw = *called;
  if (!raw.ok()) co_return ResultEnvelope::Failure(raw.status().message());
  co_return NormaliseToolResult(std::move(*raw));
}

void ChainExecutor::Queue(TurnContext& ctx) {
  if (ctx.extras().system_calls.empty()) return;
  const std::vector<ToolCall> calls = std::exchange(ctx.extend().system_calls, {});
  for (size_t i = 0; i < calls.size(); ++i) {
    ProposedCall p{&calls[i], ctx.FindTool(calls[i].name), static_cast<int>(ctx.result.tools.size()), false, true};
    const GuardDecision decision = policies_.Guard(ctx, p);
    const CallVerdict& verdict = decision.verdict;
    Json data = CallEventData(ctx, p);
    data["policy"] = "system";
    if (verdict.kind == CallVerdict::Kind::kReplace) {
      ToolOutcome o = BaseOutcome(ctx, p, ToolOutcome::Status::kDeferred);
      o.idempotency_key = IdempotencyKey(ctx, p.position);
      data["idempotency_key"] = o.idempotency_key;
      ctx.Emit("tool.deferred", std::move(data));
      ctx.result.tools.push_back(std::move(o));
      continue;
    }
    // Refused by a guard, or a tool that would run now or wait for approval (reins check
    // refuses such a flag tool): recorded, never run in place of the outbox.
    ToolOutcome o = BaseOutcome(ctx, p, ToolOutcome::Status::kRejected);
    o.reason = verdict.kind == CallVerdict::Kind::kReject ? verdict.reason : "not_deferred";
    o.message = verdict.kind == CallVerdict::Kind::kReject ? verdict.message : "a call the runtime makes must be deferred";
    data["reason"] = o.reason;
    data["guard"] = decision.policy;
    data["message"] = o.message;
    ctx.Emit("tool.rejected", std::move(data));
    ctx.result.tools.push_back(std::move(o));
  }
}

namespace {

// The approval a paused call waits for: what the person reads, and who may answer it,
// for how long, and how (the tool's approval rule; a call outside data steered asks the
// same people, and never for "always").
PendingApproval Paused(const TurnContext& ctx, const ProposedCall& p, const CallVerdict& verdict) {
  const ApprovalRule& rule = p.tool->approval;
  PendingApproval a;
  a.id = "a_" + IdempotencyKey(ctx, p.position);
  a.tool = p.call->name;
  a.args = p.call->args;
  a.request_text = ctx.user_text();
  a.reason = verdict.approval;
  a.prompt = verdict.prompt;
  a.provenance = verdict.provenance;
  // The person whose request this is: in a turn that answers an approval, whoever asked
  // for that one, not its approver.
  const PendingApproval* answered = ctx.decisions().decided_approval.get();
  a.requested_by = answered != nullptr && ctx.input.approve ? answered->requested_by : ctx.input.speaker;
  a.approvers = rule.approvers;
  // To the whole second, as the API and the trace write it (expires_at), so that what
  // they say and when it lapses agree.
  if (rule.ttl_s > 0) a.expires_at_ms = (ctx.clock.NowMs() + int64_t{1000} * rule.ttl_s + 999) / 1000 * 1000;
  a.allow_edit = rule.allow_edit;
  a.may_remember = rule.remember == RememberScope::kSession && a.reason != ApprovalReason::kUntrustedData;
  return a;
}

}  // namespace

// The calls run one at a time; only running one is awaited. What happens to a call that
// does not run (skipped, rejected, paused, deferred) and what a call's result does are
// plain functions: a coroutine keeps every local of every branch in its frame, and this
// one's was 4.3 KB, a block glibc serves only after merging the small ones freed since
// its last such request (docs/PERFORMANCE.md, round 12).
Task<ChainOutcome> ChainExecutor::Run(TurnContext& ctx, std::span<const ToolCall> calls, Json answer) {
  std::vector<ProposedCall> proposed;
  for (size_t i = 0; i < calls.size(); ++i) {
    proposed.push_back({&calls[i], ctx.FindTool(calls[i].name), static_cast<int>(i), false});
  }
  policies_.ShapeCalls(ctx, proposed);

  ChainOutcome outcome;
  for (const ProposedCall& p : proposed) {
    if (Settled(ctx, p, outcome)) continue;
    if (WriteLedger::Records(*p.tool)) {
      co_await RunWrite(ctx, p, answer, outcome);
      continue;
    }
    int64_t latency_ms = 0;
    ResultEnvelope result = co_await Execute(ctx, p, answer, &latency_ms, {});
    Executed(ctx, p, std::move(result), latency_ms, outcome);
  }
  co_return outcome;
}

Task<void> ChainExecutor::RunWrite(TurnContext& ctx, const ProposedCall& p, const Json& answer,
                                   ChainOutcome& outcome) {
  WriteStart start = co_await writes_.Begin(ctx, *p.tool, *p.call, WriteLedger::Key(ctx, *p.call));
  const std::string key = start.record.key;  // the record moves on to Finish
  const ExecutedWrite note{key, start.kind == WriteStart::Kind::kReplay, start.record.attempts};
  switch (start.kind) {
    case WriteStart::Kind::kReplay:
      Executed(ctx, p, NormaliseToolResult(std::move(start.record.result)), 0, outcome, &note);
      co_return;
    case WriteStart::Kind::kUncertain:
    case WriteStart::Kind::kUnrecorded:
      NotRun(ctx, p, start, outcome);
      co_return;
    case WriteStart::Kind::kRun:
    case WriteStart::Kind::kRetry:
      break;
  }
  int64_t latency_ms = 0;
  bool timed_out = false;
  ResultEnvelope result = co_await Execute(ctx, p, answer, &latency_ms, start.record.key, &timed_out);
  // A call that did not answer in time may have taken effect: its record stays running,
  // so that a retry of the turn treats it as any interrupted try, and the person is told
  // it may or may not have happened (the outcome's reason).
  if (!timed_out) co_await writes_.Finish(std::move(start.record), result);
  Executed(ctx, p, std::move(result), latency_ms, outcome, &note);
  if (timed_out) ctx.result.tools.back().reason = "uncertain";
}

void ChainExecutor::NotRun(TurnContext& ctx, const ProposedCall& p, const WriteStart& start,
                           ChainOutcome& outcome) const {
  const bool uncertain = start.kind == WriteStart::Kind::kUncertain;
  ToolOutcome o = BaseOutcome(ctx, p, ToolOutcome::Status::kSkipped);
  o.reason = uncertain ? "uncertain" : "unrecorded";
  o.idempotency_key = start.record.key;
  o.message = uncertain ? "not run again: an earlier try of this turn was interrupted while this call ran, so it "
                          "may or may not have taken effect, and its backend takes no idempotency key"
                        : "not run: its record could not be stored before it ran (" + start.error.message() + ")";
  Json data = CallEventData(ctx, p);
  if (uncertain) {
    data["write_key"] = start.record.key;
    data["attempts"] = start.record.attempts;
    data["since_ms"] = start.record.started_ms;
    ctx.Emit("write.uncertain", std::move(data));
  } else {
    data["reason"] = o.reason;
    ctx.Emit("tool.skipped", std::move(data));
  }
  const std::string told = uncertain ? "; tell the person plainly that you cannot tell whether it happened, and "
                                       "that they should check before asking for it again"
                                     : "; tell the person it was not done";
  ctx.Append(Message::Tool(p.call->id, p.call->name, ErrorContent(o.message + told), true));
  ctx.result.tools.push_back(std::move(o));
  outcome.stop = ChainStop::kError;
}

bool ChainExecutor::Settled(TurnContext& ctx, const ProposedCall& p, ChainOutcome& outcome) const {
  const std::string& name = p.call->name;
  const bool out_of_time = ctx.deadline_ms != 0 && ctx.RemainingMs() == 0;
  if (outcome.stop != ChainStop::kNone || p.truncated || out_of_time) {
    std::string reason = p.truncated ? "truncated" : out_of_time ? "turn_timeout" : "chain_stopped";
    std::string why = reason == "truncated"
                          ? "not executed: it was proposed together with a tool that may ask the user to "
                            "clarify; call it again once that result is known"
                      : reason == "turn_timeout" ? "not executed: the turn ran out of time (limits.turn_timeout_ms)"
                                                 : "not executed: an earlier call in the same response stopped the chain";
    if (out_of_time) outcome.stop = ChainStop::kError;
    ToolOutcome o = BaseOutcome(ctx, p, ToolOutcome::Status::kSkipped);
    o.reason = reason;
    o.message = why;
    Json data = CallEventData(ctx, p);
    data["reason"] = reason;
    ctx.Emit("tool.skipped", std::move(data));
    ctx.Append(Message::Tool(p.call->id, name, ErrorContent(why), true));
    ctx.result.tools.push_back(std::move(o));
    return true;
  }

  const GuardDecision decision = policies_.Guard(ctx, p);
  const CallVerdict& verdict = decision.verdict;
  if (verdict.kind == CallVerdict::Kind::kReject) {
    ToolOutcome o = BaseOutcome(ctx, p, ToolOutcome::Status::kRejected);
    o.reason = verdict.reason;
    o.message = verdict.message;
    Json data = CallEventData(ctx, p);
    data["reason"] = verdict.reason;
    data["guard"] = decision.policy;
    data["message"] = verdict.message;
    ctx.Emit("tool.rejected", std::move(data));
    ctx.Append(Message::Tool(p.call->id, name, ErrorContent("rejected (" + verdict.reason + "): " +
                                                             verdict.message), true));
    ctx.result.tools.push_back(std::move(o));
    // The model's plan for the rest of this response rested on this call.
    outcome.stop = ChainStop::kError;
    return true;
  }
  if (verdict.kind == CallVerdict::Kind::kPause) {
    // Not run: it waits for a person. Calls after it wait too (skipped), so the model
    // can propose them again once the decision is known.
    ToolOutcome o = BaseOutcome(ctx, p, ToolOutcome::Status::kSkipped);
    o.reason = "awaiting_approval";
    o.message = verdict.message;
    PendingApproval pending = Paused(ctx, p, verdict);
    Json data = CallEventData(ctx, p);
    data["approval_id"] = pending.id;
    if (pending.reason != ApprovalReason::kPolicy) data["reason"] = kApprovalReasons.Name(pending.reason);
    if (pending.reason == ApprovalReason::kCondition) data["condition"] = ConditionsInWords(*p.tool);
    ctx.Emit("approval.requested", std::move(data));
    ctx.Append(Message::Tool(p.call->id, name, ErrorContent("not run yet: " + verdict.message), false));
    ctx.result.tools.push_back(std::move(o));
    pending.request_tools = ctx.RequestTools();
    outcome.stop = ChainStop::kApproval;
    outcome.approval = std::move(pending);
    return true;
  }
  if (verdict.kind == CallVerdict::Kind::kReplace) {
    // Deferred: the model sees only the synthetic result; the real call waits in the
    // outbox under a key stable across retries (turn, response, position).
    ToolOutcome o = BaseOutcome(ctx, p, ToolOutcome::Status::kDeferred);
    o.idempotency_key = IdempotencyKey(ctx, p.position);
    Json data = CallEventData(ctx, p);
    data["idempotency_key"] = o.idempotency_key;
    data["instruction"] = verdict.message;
    data["policy"] = decision.policy;
    ctx.Emit("tool.deferred", std::move(data));
    ctx.Append(Message::Tool(p.call->id, name, verdict.message, false));
    ctx.result.tools.push_back(std::move(o));
    return true;  // a synthetic result never stops the chain
  }
  return false;
}

void ChainExecutor::Executed(TurnContext& ctx, const ProposedCall& p, ResultEnvelope result, int64_t latency_ms,
                             ChainOutcome& outcome, const ExecutedWrite* write) const {
  const std::string& name = p.call->name;
  policies_.Observe(ctx, p, result);

  ctx.Append(Message::Tool(p.call->id, name, EnvelopeText(result), !result.success));
  // Outside data is labelled where the defence watches it (the trace, its spans, the viewer).
  const bool untrusted = p.tool->trust == ToolTrust::kUntrusted &&
                         (ctx.config.untrusted_data.enabled || !ctx.config.rails.no_untrusted_links.is_null());
  ctx.Emit("tool.executed", ToolExecutedData(*p.call, ctx.response_index, p.position, p.tool->may_clarify, result,
                                             ctx.history().back().text, latency_ms, untrusted,
                                             write != nullptr ? *write : ExecutedWrite{}));
  ToolOutcome o = BaseOutcome(ctx, p, ToolOutcome::Status::kExecuted);
  if (write != nullptr) o.idempotency_key = std::string(write->key);
  o.latency_ms = latency_ms;
  if (!result.success) o.message = result.error;
  o.result = std::move(result);
  ctx.result.tools.push_back(std::move(o));

  // What the result does to the rest of the chain (the question's request tools count
  // this call among those that succeeded).
  const ResultEnvelope& kept = *ctx.result.tools.back().result;
  if (!kept.StopsChain()) return;
  if (kept.next_action == NextAction::kClarificationNeeded) {
    outcome.stop = ChainStop::kClarification;
    PendingClarification pending;
    pending.id = "c_" + ctx.result.turn_id.substr(ctx.result.turn_id.find('_') + 1) + "_" + std::to_string(p.position);
    pending.clarification = *kept.clarification;
    pending.tool = name;
    pending.entity_type = EntityTypeOfOptions(*p.tool, kept);
    pending.request_text = ctx.user_text();
    pending.request_tools = ctx.RequestTools();
    outcome.clarification = std::move(pending);
  } else if (kept.next_action == NextAction::kComplete && kept.success) {
    outcome.stop = ChainStop::kComplete;
  } else {
    outcome.stop = ChainStop::kError;
  }
}

}  // namespace reins
