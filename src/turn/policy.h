// Policy: one governance mechanism plugged into the turn pipeline, Envoy-filter style,
// and PolicyChain, which owns the order the policies are asked in for every hook.
// A policy is built once per agent config and shared read-only by every turn; what it
// keeps for a turn lives in a TurnContext slot of its own (ctx.Slot<T>()), what it keeps
// across turns in SessionState.
//
// Hooks, in the order a turn meets them: Preempt (answer the turn without the model),
// Admit (the floor's gate), OnClarificationAnswered and Resume (a turn that answers what
// a policy paused), ShapeCalls / Guard / Observe (each model response's calls),
// RequiredToolMissing, ReviewReply (rails on the final text), OnTurnEnd. Call hooks
// return a verdict that says exactly what happens next:
//   Continue  - nothing to say; the next policy (or the stage) goes on;
//   Reject    - the proposed call is refused; the model sees the reason as an error
//               result it can repair from (a verdict in the trace, not an error);
//   Replace   - the call does not run now; the model sees `synthetic` instead
//               (deferred tools);
//   Pause     - the call waits for a person's approval; the turn ends awaiting it.
// A stage never iterates the policies itself: it asks the chain, which applies the
// hook's rule ("the first verdict other than Continue wins", "every rail in order") and
// hands back one answer. Adding a mechanism adds a folder under src/policy/ and one line
// in BuildPolicyChain() (policy/registry.cc); no stage changes
// (docs/architecture.md, "Adding a mechanism").
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "turn/turn_context.h"
#include "reins/envelope.h"
#include "reins/message.h"

namespace reins {

// One call of a model response, as the executor sees it.
struct ProposedCall {
  const ToolCall* call = nullptr;
  const ToolDef* tool = nullptr;  // nullptr when the model named an unknown tool
  int position = 0;               // 0-based within the response
  bool truncated = false;         // set by ShapeCalls: do not run in this round (I2)
  // Proposed by the runtime itself (the safety override's flag), not by the model:
  // nothing the model read can have steered it.
  bool from_runtime = false;
};

// What the admission gate says about a turn, before anything else happens (I6).
struct AdmitVerdict {
  enum class Kind { kAdmit, kBlock, kCancel };
  Kind kind = Kind::kAdmit;
  std::string reason;  // kBlock: who holds the floor, for what, until when
  bool stale = false;  // kBlock: it waited in the queue past floor.max_queue_age_ms

  static AdmitVerdict Admit() { return {}; }
  static AdmitVerdict Block(std::string reason) { return {Kind::kBlock, std::move(reason), false}; }
  static AdmitVerdict Stale(std::string reason) { return {Kind::kBlock, std::move(reason), true}; }
  static AdmitVerdict Cancel() { return {Kind::kCancel, "", false}; }
};

struct CallVerdict {
  enum class Kind { kContinue, kReject, kReplace, kPause };
  Kind kind = Kind::kContinue;
  std::string reason;   // kReject: short code (schema, provenance, unknown_tool, invalid_json)
  std::string message;  // kReject: what the model should do; kReplace: the synthetic result
  // kPause: why the call waits, the question the person reads (empty: the pipeline's
  // sentence for an approval rule) and, for outside data, where each value came from
  // (PendingApproval::provenance).
  ApprovalReason approval = ApprovalReason::kPolicy;
  std::string prompt;
  Json provenance;

  static CallVerdict Continue() { return {}; }
  static CallVerdict Reject(std::string reason, std::string message) {
    return {Kind::kReject, std::move(reason), std::move(message)};
  }
  static CallVerdict Replace(std::string synthetic) { return {Kind::kReplace, "", std::move(synthetic)}; }
  static CallVerdict Pause(std::string why) { return {Kind::kPause, "awaiting_approval", std::move(why)}; }
  static CallVerdict Pause(std::string why, ApprovalReason reason, std::string prompt, Json provenance) {
    CallVerdict v = Pause(std::move(why));
    v.approval = reason;
    v.prompt = std::move(prompt);
    v.provenance = std::move(provenance);
    return v;
  }
};

// How a turn that answers what a policy paused goes on, before the model is asked
// anything: the history gets `note` (what the person decided or chose) and, when there
// is one, the paused call as its own call/result pair (I10), which runs first.
struct Resumption {
  std::string note;
  std::optional<ToolCall> call;
  bool denied = false;  // the call is refused, not run: the model sees the denial
  Json answer;          // not null: the person's answer the call resumes with (it asked mid-call)
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string_view Name() const = 0;

  // Once per model response, before any call runs (may mark calls truncated).
  virtual void ShapeCalls(TurnContext&, std::vector<ProposedCall>&) const {}
  // Before each call; the first verdict other than Continue wins.
  virtual CallVerdict Guard(TurnContext&, const ProposedCall&) const { return CallVerdict::Continue(); }
  // After each call that executed, with its normalised result.
  virtual void Observe(TurnContext&, const ProposedCall&, const ResultEnvelope&) const {}
  // When the user answers a pending clarification by choosing `option_id`.
  virtual void OnClarificationAnswered(TurnContext&, const PendingClarification&, const std::string& /*option_id*/) const {}
  // The turn answers what this policy paused (ctx.decisions()): how it resumes. First wins;
  // with none, the turn's history gets the person's words.
  virtual std::optional<Resumption> Resume(TurnContext&) const { return std::nullopt; }
  // First of all: may this speaker's turn enter at all? The first non-admit wins.
  virtual AdmitVerdict Admit(TurnContext&) const { return AdmitVerdict::Admit(); }
  // At the end of a turn that ran: may open or release a lease (ctx.ChangeLease).
  virtual void OnTurnEnd(TurnContext&) const {}
  // Before any model call: a policy may answer the turn itself (safety override) by
  // returning the reply; it may add deferred calls to ctx.result.tools. First wins.
  virtual std::optional<std::string> Preempt(TurnContext&) const { return std::nullopt; }
  // The model answered with text. A policy may insist on a tool first: it returns the
  // tool's name, and the loop asks once more with tool choice forced to it.
  virtual std::optional<std::string> RequiredToolMissing(TurnContext&) const { return std::nullopt; }
  // Rails: a policy that reviews the reply says how it meets one that streams
  // (docs/streaming.md). Only rails are asked to review; kWholeReply judges the whole
  // reply alone (a streaming turn's reply is then held until it is whole), kBySentence
  // judges one on its way too: ReviewSentence before each sentence is sent (it may
  // rewrite or drop it; `sent` is what went before), CloseReply once the reply's own
  // text is all sent (it may append, never take back).
  enum class Rail { kNone, kWholeReply, kBySentence };
  virtual Rail rail() const { return Rail::kNone; }
  // On the final reply before delivery. Returns true when it changed `reply`.
  virtual bool ReviewReply(TurnContext&, std::string& /*reply*/) const { return false; }
  virtual bool ReviewSentence(TurnContext&, const std::string& /*sent*/, std::string& /*sentence*/) const { return false; }
  virtual bool CloseReply(TurnContext&, const std::string& /*sent*/, std::string& /*tail*/) const { return false; }
  // A sentence on its way waits until its response's calls are known (reply_stream.h),
  // then goes to ReviewSentence: a claim of an action whose call may follow it.
  virtual bool Waits(TurnContext&, const std::string& /*sentence*/) const { return false; }
};

// A guard's verdict and the policy that gave it (the trace names the guard).
struct GuardDecision {
  CallVerdict verdict;
  std::string_view policy;  // empty for Continue
};

// The policies an agent runs, in order, and the rule of each hook.
class PolicyChain {
 public:
  void Add(std::unique_ptr<Policy> policy) { policies_.push_back(std::move(policy)); }
  size_t size() const { return policies_.size(); }

  // The first verdict other than Admit.
  AdmitVerdict Admit(TurnContext& ctx) const;
  // The first policy that answers the turn itself.
  std::optional<std::string> Preempt(TurnContext& ctx) const;
  // Every policy, in order, on one response's calls.
  void ShapeCalls(TurnContext& ctx, std::vector<ProposedCall>& calls) const;
  // The first verdict other than Continue.
  GuardDecision Guard(TurnContext& ctx, const ProposedCall& call) const;
  void Observe(TurnContext& ctx, const ProposedCall& call, const ResultEnvelope& result) const;
  void OnClarificationAnswered(TurnContext& ctx, const PendingClarification& pending, const std::string& option_id) const;
  // The first policy that resumes what the turn answers.
  std::optional<Resumption> Resume(TurnContext& ctx) const;
  void OnTurnEnd(TurnContext& ctx) const;
  // The first tool a policy insists on before the model may answer.
  std::optional<std::string> RequiredToolMissing(TurnContext& ctx) const;
  // Every rail, in order, on the reply; `fired(rail, before, after)` for each that changed it.
  using RailFired = std::function<void(std::string_view rail, const std::string& before, const std::string& after)>;
  std::string ReviewReply(TurnContext& ctx, std::string reply, const RailFired& fired) const;
  // The same for a streamed reply: every rail on one sentence, then on its end (the
  // text to append, "" for none).
  std::string ReviewSentence(TurnContext& ctx, const std::string& sent, std::string sentence, const RailFired& fired) const;
  std::string CloseReply(TurnContext& ctx, const std::string& sent, const RailFired& fired) const;
  // Whether a rail has a streamed sentence wait for its response's calls.
  bool Waits(TurnContext& ctx, const std::string& sentence) const;
  // The first rail that can judge only a whole reply ("" when every rail streams).
  std::string_view WholeReplyRail() const;

 private:
  std::vector<std::unique_ptr<Policy>> policies_;
};

}  // namespace reins
