// TurnPipeline: the life of a turn as a short sequence of named stages.
//
//   Preempt      a crisis message is answered at once (safety override), before the
//                gate and whatever is pending, which it leaves as they were (I6)
//   Gate         the admission gate: may this speaker's turn enter at all (floor lease)
//   Admit        validate the input; answer a pending clarification (policies hear it)
//   BuildContext append the user's message, or, when the turn answers what a policy
//                paused (an approval, a clarification), that policy's note
//   Resume       after `approve`: the decided call runs, or is refused, exactly as
//                proposed; after `select` on a question a call asked mid-call: that call
//                resumes with the answer (Policy::Resume says which)
//   ModelLoop    model calls and governed tool chains (model_loop.h, chain_executor.h);
//                with plan.enabled, PlanRunner: plan, one governed loop per step, synthesis
//   Present      a clarification: the system asks, with the tool's real options; or an
//                approval: the system asks the person to approve the paused call
//   Audit        with audit.enabled: one audit call over the trace, one bounded repair
//   Review       rails check and correct the final text
//   Deliver      the final reply, with pending notices in front
//
// A streamed reply (docs/streaming.md) is reviewed sentence by sentence as the model
// writes it (ReplyStream, Judge), and Review then only appends to what was sent.
//
// Deferred calls run after the pipeline, once the turn is in the store
// (runtime_deferred.cc, deferred_runner.h). The stages ask the PolicyChain (turn/policy.h) at
// each hook; a new mechanism plugs into those hooks and changes no stage. The turn's
// status is its phase (TurnPhaseMachine): no stage writes it. Preempt to Resume are in
// turn_opening.cc; Present, Review and Deliver in turn_reply.cc; the rest here.
#pragma once

#include <memory>

#include "pipeline/audit_stage.h"
#include "pipeline/chain_executor.h"
#include "pipeline/model_loop.h"
#include "pipeline/plan_runner.h"
#include "turn/turn_phase.h"
#include "turn/policy.h"
#include "reins/model_provider.h"
#include "tools/tool_router.h"

namespace reins {

// What holds a streamed reply until it is whole ("" when it streams sentence by
// sentence): "audit.enabled", "plan.enabled", or "rails.<name>" for a rail that judges
// only whole replies (docs/streaming.md). `reins check` says it too.
std::string ReplyHeldBy(const AgentConfig& config, const PolicyChain& policies);

class TurnPipeline {
 public:
  // `audit_model` answers the audit's verdict calls (audit_model in the config; else
  // the agent's model); every other call goes to `model`. `writes` records immediate
  // writes ahead (write_ledger.h).
  TurnPipeline(const AgentConfig& config, ModelProvider& model, ModelProvider& audit_model, const ToolRouter& tools,
               WriteLedger& writes);

  // Runs one turn in `ctx`. A non-OK Status means the input was refused before
  // anything happened; otherwise ctx.result holds the outcome. `phase` (over
  // ctx.result) is the caller's and lives as long as the turn: Run is not a coroutine,
  // and no frame of it is held while the turn waits on its model.
  Task<Status> Run(TurnContext& ctx, TurnPhaseMachine& phase);

 private:
  // True when the gate ended the turn (blocked or cancelled).
  bool Gate(TurnContext& ctx, TurnPhaseMachine& phase);
  Status Admit(TurnContext& ctx);
  void EndTurn(TurnContext& ctx, const TurnPhaseMachine& phase);
  static void Close(TurnContext& ctx, const TurnPhaseMachine& phase);
  // The resumption whose call runs before the model, if the turn has one.
  std::optional<Resumption> BuildContext(TurnContext& ctx);
  void Present(TurnContext& ctx, PendingClarification pending, TurnPhaseMachine& phase);
  void PresentApproval(TurnContext& ctx, PendingApproval approval, TurnPhaseMachine& phase);
  // Runs (approved, answered) or refuses (denied) the call the person just decided on.
  Task<ChainOutcome> Resume(TurnContext& ctx, std::unique_ptr<Resumption> resumption);
  // The turn up to its model, outside any coroutine (a frame keeps every local for as
  // long as the turn waits): started, then answered at once (a crisis), closed by the
  // gate, refused, or admitted with its context built. A Status when the turn ends here
  // (refused, or OK); nullopt when the model is to be asked, `resumption` then holding
  // the call the person decided on, to run first, if any.
  std::optional<Status> Open(TurnContext& ctx, TurnPhaseMachine& phase, std::unique_ptr<Resumption>& resumption);
  // After admission: the model loop, or the plan, to the turn's end; a resumption first.
  // `resumption` on the heap, handed on and freed once it ran, and Finish's `outcome` by
  // reference: in a frame they would sit for as long as the turn waits on its model.
  Task<Status> RunLoop(TurnContext& ctx, TurnPhaseMachine& phase, std::unique_ptr<Resumption> resumption);
  Task<Status> RunPlan(TurnContext& ctx, TurnPhaseMachine& phase, std::unique_ptr<Resumption> resumption);
  // Resume, then the loop's conclusion of the call's outcome; true when that ended the turn.
  Task<bool> ResumeFirst(TurnContext& ctx, TurnPhaseMachine& phase, std::unique_ptr<Resumption> resumption);
  std::optional<std::string> Preempt(TurnContext& ctx);
  void AnswerCrisis(TurnContext& ctx, std::string answer, TurnPhaseMachine& phase);
  std::string Review(TurnContext& ctx, std::string reply);
  PolicyChain::RailFired RailsFiredIn(TurnContext& ctx) const;
  std::string WithNotices(TurnContext& ctx, std::string reply, bool into_history = true);
  // Streaming: the stream over the runtime's sender, live or held, and what it sends of
  // one sentence (the rails' verdict, notices in front of the first). OpenStream returns
  // how the reply will come, for turn.started; null when the caller does not stream.
  Json OpenStream(TurnContext& ctx);
  std::string Judge(TurnContext& ctx, const std::string& sent, std::string sentence);
  // What the person is told in the end: a streamed reply's sent text, then `rest`.
  std::string Told(TurnContext& ctx, std::string rest);
  static EventData ReplyFinal(const TurnContext& ctx);
  void Deliver(TurnContext& ctx, std::string reply, TurnPhaseMachine& phase);
  void DeliverWhole(TurnContext& ctx, std::string whole, TurnPhaseMachine& phase);  // `whole` is Told already
  // What a loop, a plan, an audit or a replayed call ended with, carried to the person.
  Task<void> Finish(TurnContext& ctx, LoopOutcome&& outcome, TurnPhaseMachine& phase, bool audit);
  void Fail(TurnContext& ctx, const std::string& why, TurnPhaseMachine& phase);
  static void WithdrawDeferred(TurnContext& ctx, const std::string& reason);
  static void Cancel(TurnContext& ctx, TurnPhaseMachine& phase);
  void Revoke(TurnContext& ctx, TurnPhaseMachine& phase);
  void AnswerLapsed(TurnContext& ctx, std::string note, TurnPhaseMachine& phase);

  PolicyChain policies_;
  ChainExecutor executor_;
  ModelLoop loop_;
  PlanRunner plan_;
  AuditStage audit_;
  bool plan_mode_;
  bool audit_on_;
  std::string reply_held_by_;  // ReplyHeldBy
  Json withheld_;              // WithheldTools: named in each turn.started
  const ToolRouter& tools_;
  const TurnContext::ResumesQuestions resumes_questions_;  // what each turn's context points at
};

}  // namespace reins
