// PlanRunner: plan-execute mode (seed 003). A turn first asks the model for a plan: a
// list of steps {id, description, stepType, requiredTools, expectedOutcome,
// toolValidationMode?}, requested as structured output and validated against a JSON
// Schema (one repair retry with the validator's message, then a single reasoning step).
// Each step runs as its own governed loop (purpose `step`) through the same ModelLoop
// and ChainExecutor as chat. A `tool` step is completed only if every required tool ran
// successfully inside it (I7); in strict mode a step that skipped them is retried with
// tool choice forced to the missing tool, up to plan.max_step_retries. One synthesis call
// then composes the reply from the steps' recorded outcomes; a failed step is named as
// not done and its text is never presented as a finding. A clarification or approval
// inside a step pauses the plan in the session; the person's answer resumes it there.
#pragma once

#include "pipeline/model_loop.h"

namespace reins {

class PlanRunner {
 public:
  explicit PlanRunner(ModelLoop& loop) : loop_(loop) {}
  // The same outcome kinds as the chat loop: a reply, or the clarification, approval or
  // failure a step ran into (which ends the turn there). `replayed`: the outcome of the
  // call the person decided on (an approval) or answered (an MCP question) at the start
  // of this turn, which belongs to the paused step: the step's loop concludes it first
  // (I1), as if the call had just run inside it.
  Task<LoopOutcome> Run(TurnContext& ctx, TurnPhaseMachine& phase, std::optional<ChainOutcome> replayed = std::nullopt);

 private:
  Task<std::vector<PlanStep>> MakePlan(TurnContext& ctx);
  // Runs one step; a non-reply outcome ends the plan.
  // `resuming`: the step was interrupted in an earlier turn (approval, clarification)
  // and goes on after the person's answer.
  Task<std::optional<LoopOutcome>> RunStep(TurnContext& ctx, TurnPhaseMachine& phase, PlanStep& step, bool resuming,
                                           std::optional<ChainOutcome> replayed);

  ModelLoop& loop_;
};

// The JSON Schema a plan must satisfy, and the parse of a valid plan. Parse fails with
// the validator's message (or names tools the agent does not define).
const Json& PlanSchema();
Result<std::vector<PlanStep>> ParsePlan(const Json& plan, const AgentConfig& config);

}  // namespace reins
