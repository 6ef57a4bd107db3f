// ModelLoop: the governed loop of one turn. It asks the model, hands each response's
// calls to the ChainExecutor, and repeats until the model answers with text, a tool
// asks the user to clarify, or limits.max_rounds is reached (a clear failure, never a
// hang). After a `complete` result it makes one last call with tool choice `none`.
// When a policy says a required tool is missing from a text answer (intents), it asks
// once more with tool choice forced to that tool.
//
// Every model call goes through Send, which also decides what a response that is not
// a finished answer means (docs/providers.md): cut off by the token limit or paused,
// the model goes on once per turn (I9), then the turn fails honestly; a call cut off
// inside is refused, never run; a refusal is answered with a plain sentence. Calls stop
// at the turn's deadline (limits.turn_timeout_ms). Audit calls go to the audit model.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pipeline/call_request.h"
#include "pipeline/chain_executor.h"
#include "turn/turn_phase.h"
#include "reins/model_provider.h"

namespace reins {

struct LoopOutcome {
  enum class Kind { kReply, kClarification, kApproval, kFailed, kRefusal };
  Kind kind = Kind::kFailed;
  std::string text;   // kReply: the candidate reply; kRefusal: the reply to deliver; kFailed: why
  HeapOptional<PendingClarification> clarification;  // rare: on the heap, as ChainOutcome's
  HeapOptional<PendingApproval> approval;
  bool out_of_time = false;  // kFailed because limits.turn_timeout_ms ran out
};

// What the person is told when the model declines: plain, and not the model's words.
inline constexpr const char* kRefusalReply = "I'm sorry, but I can't help with that request.";

class ModelLoop {
 public:
  ModelLoop(const AgentConfig& config, const PolicyChain& policies, ModelProvider& model, ModelProvider& audit_model,
            ChainExecutor& executor);
  // Rounds count against limits.max_rounds for the whole turn (ctx.loop_rounds), so a
  // plan's steps share one budget (I9). `first` is the first call's tool choice, copied
  // when the loop starts: by reference, it takes no place in this frame or, as a
  // temporary, in the awaiting one's, both alive while the turn waits on its model.
  // The outcome comes back on the heap for the same reason (a LoopOutcome was 440 bytes).
  Task<std::unique_ptr<LoopOutcome>> Run(TurnContext& ctx, TurnPhaseMachine& phase, const ToolChoice& first);
  // What a chain's stop means for the turn, as in the loop: a clarification or an
  // approval ends it; after `complete` exactly one call with tool choice `none` gives the
  // reply (I1); nullopt: the loop goes on (an error the model may repair, or no stop).
  Task<std::optional<LoopOutcome>> Conclude(TurnContext& ctx, TurnPhaseMachine& phase, ChainOutcome chain);
  // A model call's answer arrives in `answer`, a variable of the caller's frame, which
  // Send sets whatever happens. Returned, it would take a place in the frame of every
  // coroutine it passes through, each alive for as long as the model thinks (a
  // Result<ModelResponse> is 104 bytes). NoAnswer() is that variable's first value.
  static Result<ModelResponse> NoAnswer() { return ModelResponse{}; }
  // One model call outside the loop (plan, synthesis), recorded like the loop's.
  Task<void> CallOnce(TurnContext& ctx, Result<ModelResponse>& answer, Purpose purpose, ToolChoice choice,
                      std::vector<Message> extra, std::optional<Json> schema = std::nullopt);
  // A call with its own messages and tools instead of the turn's (the audit, a gather
  // round restricted to some tools); recorded like every other call.
  Task<void> CallWith(TurnContext& ctx, Result<ModelResponse>& answer, Purpose purpose, ToolChoice choice,
                      std::vector<Message> messages, std::optional<Json> schema,
                      std::shared_ptr<const std::vector<ToolSpec>> tools);
  const std::shared_ptr<const std::vector<ToolSpec>>& tools() const { return tools_; }

  // The failed outcome for a model call that failed (the turn's timeout named as such).
  static LoopOutcome Failed(const TurnContext& ctx, const Status& call);
  // True when a call failed because the turn's limits.turn_timeout_ms ran out: the turn
  // then fails, even where another failure would be passed over (the audit fails open).
  static bool OutOfTurnTime(const TurnContext& ctx, const Status& call);
  // A text answer as the turn's reply, or the refusal it stands for; recorded in history.
  LoopOutcome Answer(TurnContext& ctx, const ModelResponse& response);

 private:
  // One logical model call, recorded in the trace; the response is appended to history
  // by the caller. `choice` by reference: a value would be a temporary of the awaiting
  // loop's frame, which waits as long as the model thinks.
  Task<void> Call(TurnContext& ctx, Result<ModelResponse>& answer, const ToolChoice& choice);
  // The request goes whole, its response_schema set: a parameter of a coroutine's is
  // a place in its frame, which waits as long as the model thinks.
  Task<void> Send(TurnContext& ctx, CallRequest call, Result<ModelResponse>& answer);
  // The request once more after an unfinished answer: `response` becomes the new one.
  Task<void> Repeat(TurnContext& ctx, ModelProvider& model, ModelRequest& request, ReplyStream* stream,
                    Result<ModelResponse>& response);
  // A response's calls run as a governed chain and concluded; null: the loop goes on.
  // Its own coroutine: the loop's frame, alive through every model call, then holds no
  // chain outcome (GCC keeps each local and awaited result of a coroutine in its frame).
  Task<std::unique_ptr<LoopOutcome>> RunCalls(TurnContext& ctx, TurnPhaseMachine& phase,
                                              std::span<const ToolCall> calls);
  // A response without calls: the turn's answer, or null when the loop goes on to a
  // round that must call a required tool (`next` set to it). Not a coroutine: the
  // answer is not kept in the loop's frame.
  std::unique_ptr<LoopOutcome> Reply(TurnContext& ctx, const ModelResponse& response, int round, ToolChoice* next);

  // The model `called` is, as the config names it (`model.model`, gen_ai.request.model),
  // or its provider where the config names none (scripted, sim).
  std::string_view ModelId(const ModelProvider& called) const;

  const PolicyChain& policies_;
  ModelProvider& model_;
  ModelProvider& audit_model_;
  std::string model_id_, audit_model_id_;
  ChainExecutor& executor_;
  std::shared_ptr<const std::vector<ToolSpec>> tools_;
};

// The tools of `config` as the model sees them.
std::shared_ptr<const std::vector<ToolSpec>> ToolSpecsOf(const AgentConfig& config);

// The request for one model call: system prompt (+ notes, page context) and the
// history, lent to the request when all of it fits the context window (CallRequest).
CallRequest BuildModelRequest(TurnContext& ctx, Purpose purpose, ToolChoice choice,
                              std::shared_ptr<const std::vector<ToolSpec>> tools);

}  // namespace reins
