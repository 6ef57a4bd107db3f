// AuditStage (seed 004): one audit call over the execution trace after the loop has a
// candidate answer, with a strict JSON verdict and exactly one bounded repair (I9):
//   accept                       - deliver the candidate;
//   rewrite_once                 - one tools-off call rewrites it using the critique;
//   gather_missing_evidence_once - one round restricted to the missing tools (tool
//                                  choice required), then one synthesis; the round
//                                  obeys next_action like the loop (I1): a
//                                  clarification or an approval it runs into ends the
//                                  turn there, `complete` gives the one tools-off call;
//   answer_insufficient          - say plainly what could not be established.
// Deterministic evidence first: an intent with `enforcement: audit` whose tools did not
// run goes straight to the gather repair without asking a model. An invalid verdict
// gets one retry, then audit.on_invalid_verdict decides; a failing audit model fails
// open (the candidate is delivered) and the trace says so.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <re2/re2.h>

#include "pipeline/chain_executor.h"
#include "pipeline/model_loop.h"

namespace reins {

class AuditStage {
 public:
  AuditStage(const AgentConfig& config, ModelLoop& loop, ChainExecutor& executor);
  // The reply to deliver (kReply), or the clarification or approval a gather round ran
  // into, or kFailed when the turn's limits.turn_timeout_ms ran out (the audit otherwise
  // fails open: a broken audit never withholds the answer); records ctx.result.audit.
  Task<LoopOutcome> Run(TurnContext& ctx, TurnPhaseMachine& phase, std::string candidate);

 private:
  Task<LoopOutcome> Gather(TurnContext& ctx, TurnPhaseMachine& phase, const std::vector<std::string>& tools,
                           std::string why, std::string candidate);
  std::string RenderPrompt(const TurnContext& ctx, const std::string& candidate) const;
  // The audit model's verdict on `candidate`, asked at most twice: a verdict that is not
  // valid goes back once with why.
  struct Verdict {
    Json verdict;  // null: none
    std::string error;
    bool model_failed = false;  // none because the audit model failed, not because its verdicts were invalid
    std::optional<Status> out_of_time;  // the turn's time ran out waiting: the turn fails
  };
  Task<void> AskVerdict(TurnContext& ctx, const std::string& candidate, Verdict& out);
  // The candidate rewritten once, without tools, as `instruction` says (the candidate
  // itself when the rewrite is unusable).
  Task<LoopOutcome> Rewrite(TurnContext& ctx, std::string instruction, std::string candidate);

  const AgentConfig& config_;
  ModelLoop& loop_;
  ChainExecutor& executor_;
  std::string catalog_;  // built once per config, capped at audit.catalog_max_chars
  // Intents with enforcement `audit` and their compiled patterns.
  std::vector<std::pair<const IntentConfig*, std::unique_ptr<RE2>>> bundles_;
};

// The verdict schema (strict), and the tool catalog line list.
const Json& AuditVerdictSchema();
std::string ToolCatalog(const AgentConfig& config, size_t max_chars);

}  // namespace reins
