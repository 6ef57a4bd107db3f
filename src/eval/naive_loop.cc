#include "eval/naive_loop.h"

#include <limits>

#include "domain/json_text.h"
#include "pipeline/model_loop.h"

namespace reins {

NaiveLoop::NaiveLoop(const AgentConfig& config, ModelProvider& model,
                     std::map<std::string, std::shared_ptr<ToolBackend>> tools, Clock& clock)
    : config_(config), model_(model), tools_(std::move(tools)), clock_(clock), specs_(ToolSpecsOf(config)) {}

std::string NaiveLoop::UserMessage(const TurnInput& input) const {
  if (input.say) return *input.say;
  if (input.select) {
    std::string title = *input.select;
    if (last_clarification_) {
      for (const ClarificationOption& o : last_clarification_->options) {
        if (o.id == *input.select) title = o.title;
      }
    }
    return "The user chose \"" + title + "\" (id " + *input.select + ").";
  }
  if (input.approve) {
    const ApprovalAnswer& a = *input.approve;
    std::string words = a.decision ? "Yes, go ahead." : "No, don't do that.";
    if (!a.args.is_null()) words += " Use " + a.args.dump() + " instead.";
    if (!a.message.empty()) words += " " + a.message;
    return words;
  }
  return "Stop.";
}

Task<ResultEnvelope> NaiveLoop::Execute(const ToolCall& call, const std::string& turn_id) {
  auto it = tools_.find(call.name);
  if (it == tools_.end()) co_return ResultEnvelope::Failure("no backend for tool '" + call.name + "'");
  ToolRequest request;
  request.tool = call.name;
  request.args = call.args;
  request.turn_id = turn_id;
  request.timeout_ms = std::numeric_limits<int64_t>::max();  // no limit on a call: a hanging tool hangs the loop
  Result<Json> raw = co_await it->second->Invoke(request);
  if (!raw.ok()) co_return ResultEnvelope::Failure(raw.status().message());
  co_return NormaliseToolResult(std::move(*raw));
}

Task<TurnResult> NaiveLoop::RunTurn(const TurnInput& input) {
  TurnResult r;
  r.turn_number = ++turns_;
  r.turn_id = "naive_turn_" + std::to_string(r.turn_number);
  auto emit = [&](EventName name, Json data) {
    r.events.push_back({name.type, r.turn_number, clock_.NowMs(), std::move(data)});
  };
  emit("turn.started", {{"speaker", input.speaker}});
  if (input.cancel) lease_.reset();
  std::string text = UserMessage(input);
  if (input.say) user_text_ = *input.say;
  history_.push_back(Message::User(text, input.say ? input.speaker : ""));

  for (int round = 1; round <= config_.max_rounds; ++round) {
    ModelRequest request;
    request.purpose = Purpose::kChat;
    request.turn = r.turn_number;
    request.user_text = user_text_;
    request.tools = specs_;
    request.messages.push_back(Message::System(config_.system_prompt));
    request.messages.insert(request.messages.end(), history_.begin(), history_.end());
    emit("model.call", {{"purpose", "chat"}, {"tool_choice", "auto"}, {"round", round}});
    ++r.model_calls;
    Result<ModelResponse> response = co_await model_.Complete(request);
    if (!response.ok()) {
      r.status = TurnStatus::kFailed;
      r.error = response.status().message();
      break;
    }
    history_.push_back(Message::Assistant(response->text, response->tool_calls));
    r.reply = response->text;
    if (response->tool_calls.empty()) break;
    int position = 0;
    for (const ToolCall& call : response->tool_calls) {
      ResultEnvelope result = co_await Execute(call, r.turn_id);
      Json envelope = EnvelopeToJson(result);
      history_.push_back(Message::Tool(call.id, call.name, JsonText(envelope), !result.success));
      emit("tool.executed", {{"call_id", call.id}, {"name", call.name}, {"args", call.args}, {"response", round},
                             {"position", position}, {"result", envelope}, {"success", result.success},
                             {"next_action", NextActionName(result.next_action)}});
      if (result.clarification) last_clarification_ = *result.clarification;
      // The floor the runtime would give: the envelope's lease, or the tool's own when it
      // asks the user to choose (`lease:` in the agent file).
      const ToolDef* def = config_.FindTool(call.name);
      std::optional<LeaseRequest> asked;
      if (result.lease) asked = *result.lease;
      if (!asked && def != nullptr && def->lease && result.next_action == NextAction::kClarificationNeeded) {
        asked = LeaseRequest{def->lease->first, def->lease->second};
      }
      if (asked) lease_ = Lease{input.speaker, asked->domain, clock_.NowMs() + int64_t{asked->ttl_s} * 1000, 0};
      ToolOutcome o;
      o.call_id = call.id;
      o.name = call.name;
      o.args = call.args;
      o.result = std::move(result);
      o.response_index = round;
      o.position = position++;
      r.tools.push_back(std::move(o));
    }
  }
  if (lease_ && lease_->ActiveAt(clock_.NowMs())) r.lease = lease_;
  emit("reply.final", {{"text", r.reply}});
  co_return r;
}

}  // namespace reins
