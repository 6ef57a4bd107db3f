// ModelLoop: the governed loop of one turn. It asks the model, hands each response's
// calls to the ChainExecutor, and repeats until the model answers with text, a tool
// asks the user to clarify, or limits.max_rounds is reached (a clear failure, never a
// hang). After a `complete` result it makes one last call with tool choice `none`.
// When a policy says a required tool is missing from a text answer (intents), it asks
// once more with tool choice forced to that tool.
#pragma once

#include <string>

#include "core/chain_executor.h"
#include "core/turn_phase.h"
#include "reins/model_provider.h"

namespace reins {

struct LoopOutcome {
  enum class Kind { kReply, kClarification, kApproval, kFailed };
  Kind kind = Kind::kFailed;
  std::string text;   // kReply: the candidate reply; kFailed: why
  std::optional<PendingClarification> clarification;
  std::optional<PendingApproval> approval;
};

class ModelLoop {
 public:
  ModelLoop(const AgentConfig& config, const PolicyChain& policies, ModelProvider& model, ChainExecutor& executor);
  // Rounds count against limits.max_rounds for the whole turn (ctx.loop_rounds), so a
  // plan's steps share one budget (I9). `first` is the first call's tool choice.
  Task<LoopOutcome> Run(TurnContext& ctx, TurnPhaseMachine& phase, ToolChoice first);
  // One model call outside the loop (plan, synthesis), recorded like the loop's.
  Task<Result<ModelResponse>> CallOnce(TurnContext& ctx, Purpose purpose, ToolChoice choice,
                                       std::vector<Message> extra, std::optional<Json> schema = std::nullopt);
  // A call with its own messages and tools instead of the turn's (the audit, a gather
  // round restricted to some tools); recorded like every other call.
  Task<Result<ModelResponse>> CallWith(TurnContext& ctx, Purpose purpose, ToolChoice choice,
                                       std::vector<Message> messages, std::optional<Json> schema,
                                       std::shared_ptr<const std::vector<ToolSpec>> tools);
  const std::shared_ptr<const std::vector<ToolSpec>>& tools() const { return tools_; }

 private:
  // One logical model call, recorded in the trace; the response is appended to history
  // by the caller.
  Task<Result<ModelResponse>> Call(TurnContext& ctx, ToolChoice choice);
  Task<Result<ModelResponse>> Send(TurnContext& ctx, ModelRequest request, std::optional<Json> schema);

  const PolicyChain& policies_;
  ModelProvider& model_;
  ChainExecutor& executor_;
  std::shared_ptr<const std::vector<ToolSpec>> tools_;
};

// The tools of `config` as the model sees them.
std::shared_ptr<const std::vector<ToolSpec>> ToolSpecsOf(const AgentConfig& config);

// The request for one model call: system prompt (+ page context) and the history.
ModelRequest BuildModelRequest(const TurnContext& ctx, Purpose purpose, ToolChoice choice,
                               std::shared_ptr<const std::vector<ToolSpec>> tools);

}  // namespace reins
