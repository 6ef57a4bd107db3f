// ChainExecutor: runs the tool calls of ONE model response, one by one, under the
// policy chain. This is where the seed-001 guarantees live:
//   - every proposed call is shaped (truncation after a may_clarify tool, I2), guarded
//     (unknown tool, bad JSON, schema I11, provenance I3) and, if allowed, executed;
//   - after each executed call its next_action decides at once: clarification_needed,
//     complete, error or success:false stop the chain; later calls are skipped (I1);
//   - every proposed call gets exactly one tool message in history, in order (I10).
#pragma once

#include <optional>
#include <span>

#include "turn/policy.h"
#include "reins/async.h"
#include "pipeline/event_text.h"
#include "pipeline/write_ledger.h"
#include "tools/tool_router.h"

namespace reins {

enum class ChainStop { kNone, kClarification, kComplete, kError, kApproval };

// Held by the frames of the coroutines that run the calls, so what it rarely holds (a
// question, an approval: 400 bytes) is on the heap.
struct ChainOutcome {
  ChainStop stop = ChainStop::kNone;
  HeapOptional<PendingClarification> clarification;
  HeapOptional<PendingApproval> approval;
};

class ChainExecutor {
 public:
  ChainExecutor(const PolicyChain& policies, const ToolRouter& tools, WriteLedger& writes)
      : policies_(policies), tools_(tools), writes_(writes) {}

  // Appends one tool message per call to the history (ctx.Append) and one ToolOutcome
  // per call to ctx.result.tools, with trace events. `answer`, when not null, is the person's answer
  // to the question the (one) call asked mid-call: the backend resumes it with that.
  // `calls` is a view the caller keeps alive until the run ends. The model loop's are
  // those of the assistant message it put in ctx.history(): a history that grows, or is
  // lent to a model request, moves that message but never its calls' own storage.
  Task<ChainOutcome> Run(TurnContext& ctx, std::span<const ToolCall> calls, Json answer = nullptr);
  // The calls the runtime proposed itself (ctx.extras().system_calls), guarded exactly like the
  // model's: queued when a deferral policy replaces them, recorded rejected when a
  // guard refuses them. Nothing runs now and nothing enters the model's history.
  void Queue(TurnContext& ctx);

 private:
  // A call that does not run: skipped, or settled by a guard (rejected, waiting for
  // approval, deferred); its message, outcome and event recorded. False: run it.
  bool Settled(TurnContext& ctx, const ProposedCall& call, ChainOutcome& outcome) const;
  // `write_key`: the write-ahead record's key of a write call, which its backend is
  // sent ("" for a read: the turn's own key for the call).
  // `timed_out` (when given) is set when the call did not answer in time: whether it took
  // effect is unknown.
  Task<ResultEnvelope> Execute(TurnContext& ctx, const ProposedCall& call, const Json& answer, int64_t* latency_ms,
                               const std::string& write_key, bool* timed_out = nullptr);
  // A write call (WriteLedger): recorded before it runs and after, or given the outcome
  // of an earlier try of the turn, or not run when that try's outcome is unknown.
  Task<void> RunWrite(TurnContext& ctx, const ProposedCall& call, const Json& answer, ChainOutcome& outcome);
  // Records what a call that ran returned, and whether it stops the chain. `write`: how
  // a write call ran (its key, an earlier try's outcome, which try), for its event.
  void Executed(TurnContext& ctx, const ProposedCall& call, ResultEnvelope result, int64_t latency_ms,
                ChainOutcome& outcome, const ExecutedWrite* write = nullptr) const;
  // A write not run: its earlier try's outcome is unknown (uncertain), or its intent
  // could not be recorded (unrecorded). Stops the chain.
  void NotRun(TurnContext& ctx, const ProposedCall& call, const WriteStart& start, ChainOutcome& outcome) const;

  const PolicyChain& policies_;
  const ToolRouter& tools_;
  WriteLedger& writes_;
};

}  // namespace reins
