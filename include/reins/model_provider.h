// ModelProvider: the interface to a language model. Implementations: the scripted
// model (scenario files), the OpenAI and Anthropic wire formats over HTTP, and the
// simulated fault-injecting model. A provider turns one ModelRequest into one ModelResponse; it
// never executes tools and never decides what runs: the executor does.
//
// Suspension: Complete() and CompleteInto() may suspend (network); they must not block
// the thread.
// A provider failure is a non-OK Status; transport retries are the provider's business
// and are not counted as logical model calls.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reins/async.h"
#include "reins/json.h"
#include "reins/message.h"
#include "reins/status.h"

namespace reins {

// Why the runtime is calling the model (SCENARIOS.md `when.purpose`).
enum class Purpose { kChat, kPlan, kStep, kAudit, kRewrite, kGather };
std::string_view PurposeName(Purpose p);
bool ParsePurpose(std::string_view name, Purpose* p);

struct ToolSpec {
  std::string name;
  std::string description;
  Json input_schema;
};

struct HistoryText;  // reins' own (src/domain/history_text.h)

struct ModelRequest {
  Purpose purpose = Purpose::kChat;
  std::vector<Message> messages;  // system prompt first
  // When set, messages[1 .. 1 + history_final) are the session's history from earlier
  // turns, unchanged since they were written: reins' own wire formats keep their text
  // there between a session's calls and write only what is new. Other providers ignore it.
  HistoryText* history_text = nullptr;
  size_t history_final = 0;
  // The tools the model may call: built once per agent and shared by every request.
  std::shared_ptr<const std::vector<ToolSpec>> tools;
  ToolChoice tool_choice;
  std::optional<Json> response_schema;  // structured output (plan, audit)
  // Where in the conversation this call happens: the scripted model matches on these.
  int turn = 0;
  std::string step_id;
  std::string user_text;
  // When set, a streaming provider passes reply text up as it arrives (the text of a
  // response that also calls tools included). The final text is still in the response.
  std::function<void(std::string_view)> on_text_delta;
  // The most this call may take (the turn's remaining budget, limits.turn_timeout_ms);
  // 0: the provider's own timeout alone. A provider gives up (DeadlineExceeded) past it.
  int64_t timeout_ms = 0;
  // The W3C trace context of this call's span (its `chat` span in the turn's trace), sent
  // as the `traceparent` header by an HTTP provider so that a gateway in between (LiteLLM,
  // Portkey) joins the trace; "" sends none.
  std::string traceparent;
};

struct Usage {
  int input_tokens = 0;
  int output_tokens = 0;
};

// Why the model stopped: a finished answer, or one the runtime must not take as one
// (docs/providers.md, "Responses that are not finished answers").
enum class FinishReason {
  kStop,       // a finished answer (text, tool calls, or both)
  kLength,     // cut off by the token limit (OpenAI "length", Anthropic "max_tokens")
  kRefusal,    // the model declined (OpenAI `refusal`, Anthropic "refusal")
  kPaused,     // Anthropic "pause_turn": send the conversation back to let it go on
};
std::string_view FinishReasonName(FinishReason f);

struct ModelResponse {
  std::string text;
  std::vector<ToolCall> tool_calls;
  std::optional<Json> json;  // structured output, when requested and parseable
  Usage usage;
  FinishReason finish = FinishReason::kStop;
  // What the provider said, for telemetry (gen_ai.response.*): the model that answered
  // and its own finish reason ("tool_calls", "end_turn"); "" where it said nothing.
  std::string model;
  std::string provider_finish;
};

class ModelProvider {
 public:
  virtual ~ModelProvider() = default;
  virtual std::string_view Name() const = 0;
  virtual Task<Result<ModelResponse>> Complete(const ModelRequest& request) = 0;
  // The same call, its answer written into `answer`, which the caller holds: the way
  // the runtime calls a model. A call that waits seconds then holds its answer once,
  // where a returned one is kept twice more, in the provider's frame and the awaiting
  // caller's (HttpModel answers this way; docs/PERFORMANCE.md, round 27). By default it
  // awaits Complete().
  virtual Task<void> CompleteInto(const ModelRequest& request, Result<ModelResponse>& answer);
  // True when a call returns by itself once request.timeout_ms has passed (HttpModel
  // bounds every attempt and every wait between attempts by it): the runtime then does
  // not race the call against a timer of its own, which costs a timer and two
  // coroutines per model call. False: the runtime stops waiting at the deadline.
  virtual bool KeepsDeadline() const { return false; }
};

}  // namespace reins
