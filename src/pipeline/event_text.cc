#include "pipeline/event_text.h"

#include "domain/json_text.h"

namespace reins {

EventData TurnStartedData(std::string_view turn_id, const TurnInput& input, const Json& reply, const Json& withheld) {
  std::string& out = EventTextBuffer();
  JsonObjectText o(out);
  {
    JsonObjectText in(o.Key("input"));  // TurnInputToJson's members
    if (input.approve) in.Value("approve", ApprovalAnswerToJson(*input.approve));
    if (input.cancel) in.Bool("cancel", true);
    if (!input.idempotency_key.empty()) in.String("idempotency_key", input.idempotency_key);
    if (!input.page_context.is_null()) in.Value("page_context", input.page_context);
    if (!input.revoke.empty()) in.String("revoke", input.revoke);
    if (input.say) in.String("say", *input.say);
    if (input.select) in.String("select", *input.select);
    in.String("speaker", input.speaker);
    if (!input.traceparent.empty()) in.String("traceparent", input.traceparent);
    if (!input.words.empty()) in.String("words", input.words);
    in.Close();
  }
  if (!reply.is_null()) o.Value("reply", reply);
  o.String("speaker", input.speaker);
  o.String("turn_id", turn_id);
  if (!withheld.is_null()) o.Value("withheld", withheld);
  o.Close();
  return EventData::FromText(out);
}

Json WithheldTools(const AgentConfig& config) {
  Json out;
  for (const ToolDef& t : config.tools) {
    if (!t.withheld.empty()) out.push_back(JsonObject("tool", t.name, "why", t.withheld));
  }
  return out;
}

EventData ModelCallData(std::string_view model, Purpose purpose, const ToolChoice& choice, std::string_view step,
                        std::string_view repeat) {
  std::string& out = EventTextBuffer();
  JsonObjectText o(out);
  o.String("model", model);
  o.String("purpose", PurposeName(purpose));
  if (!repeat.empty()) o.String("repeat", repeat);
  if (!step.empty()) o.String("step", step);
  o.String("tool_choice", choice.ToString());
  o.Close();
  return EventData::FromText(out);
}

EventData ModelResponseData(int response, const ModelResponse& r) {
  std::string& out = EventTextBuffer();
  JsonObjectText o(out);
  if (r.finish != FinishReason::kStop) o.String("finish", FinishReasonName(r.finish));
  if (!r.model.empty()) o.String("model", r.model);  // as the provider said: telemetry's gen_ai.response.*
  if (!r.provider_finish.empty()) o.String("provider_finish", r.provider_finish);
  o.Int("response", response);
  o.String("text", r.text);
  std::string& calls = o.Key("tool_calls");
  calls += '[';
  for (size_t i = 0; i < r.tool_calls.size(); ++i) {
    const ToolCall& c = r.tool_calls[i];
    if (i > 0) calls += ',';
    JsonObjectText call(calls);
    call.String("arguments", c.arguments_text);
    call.String("id", c.id);
    call.String("name", c.name);
    call.Close();
  }
  calls += ']';
  if (r.usage.input_tokens > 0 || r.usage.output_tokens > 0) {  // real providers; the scripted model has none
    JsonObjectText usage(o.Key("usage"));
    usage.Int("input_tokens", r.usage.input_tokens);
    usage.Int("output_tokens", r.usage.output_tokens);
    usage.Close();
  }
  o.Close();
  return EventData::FromText(out);
}

EventData ToolExecutedData(const ToolCall& call, int response, int position, bool may_clarify,
                           const ResultEnvelope& result, std::string_view envelope, int64_t latency_ms, bool untrusted,
                           const ExecutedWrite& write) {
  std::string& out = EventTextBuffer();
  JsonObjectText o(out);
  if (call.args_valid) o.Value("args", call.args);
  else o.String("args", call.arguments_text);  // the raw text, as the model sent it
  if (write.attempt > 1 && !write.replayed) o.Int("attempt", write.attempt);
  o.String("call_id", call.id);
  o.Int("latency_ms", latency_ms);
  o.Bool("may_clarify", may_clarify);
  o.String("name", call.name);
  o.String("next_action", NextActionName(result.next_action));
  o.Int("position", position);
  if (write.replayed) o.Bool("replayed", true);
  o.Int("response", response);
  o.Raw("result", envelope);
  o.Bool("success", result.success);
  if (untrusted) o.Bool("untrusted", true);
  if (!write.key.empty()) o.String("write_key", write.key);
  o.Close();
  return EventData::FromText(out);
}

EventData ReplyFinalData(std::string_view reply, std::optional<size_t> streamed) {
  std::string& out = EventTextBuffer();
  JsonObjectText o(out);
  if (streamed) o.Int("streamed", static_cast<int64_t>(*streamed));
  o.String("text", reply);
  o.Close();
  return EventData::FromText(out);
}

EventData TurnCompletedData(TurnStatus status, TurnPhase phase) {
  std::string& out = EventTextBuffer();
  JsonObjectText o(out);
  o.String("phase", TurnPhaseName(phase));
  o.String("status", TurnStatusName(status));
  o.Close();
  return EventData::FromText(out);
}

}  // namespace reins
