#include "telemetry/turn_spans.h"

#include <algorithm>
#include <array>

#include "domain/json_text.h"

namespace reins::telemetry {
namespace {

int64_t Ns(int64_t ms) { return ms * 1000000; }

// Fields of an event's data that hold what a person or a model wrote, or what a tool
// was given or returned: on spans only with capture_content.
bool IsContent(std::string_view field) {
  static constexpr std::array<std::string_view, 15> kContent = {
      "text", "args", "result", "before", "after", "question", "options", "sentence", "tool_calls",
      "verdict", "steps", "input", "message", "instruction", "progress"};
  return std::find(kContent.begin(), kContent.end(), field) != kContent.end();
}

bool IsScalar(const Json& v) { return v.is_string() || v.is_boolean() || v.is_number(); }

// An event's data as span attributes: the call's name and id under the conventions'
// names, the rest as reins.<field>; contents only when asked for.
Attributes DataAttributes(const Json& data, bool capture_content) {
  Attributes out;
  if (!data.is_object()) return out;
  for (const auto& [key, value] : data.items()) {
    if (key == "name" && value.is_string()) {
      out.emplace_back("gen_ai.tool.name", value);
    } else if (key == "call_id" && value.is_string()) {
      out.emplace_back("gen_ai.tool.call.id", value);
    } else if (IsContent(key)) {
      if (capture_content) out.emplace_back("reins." + key, IsScalar(value) ? value : Json(JsonText(value)));
    } else if (IsScalar(value)) {
      out.emplace_back("reins." + key, value);
    } else if (value.is_array() && std::all_of(value.begin(), value.end(), [](const Json& v) { return v.is_string(); })) {
      out.emplace_back("reins." + key, value);
    } else if (!value.is_null()) {
      out.emplace_back("reins." + key, JsonText(value));
    }
  }
  return out;
}

// Events that are spans, or the turn span's own start, end and content, not span events.
bool IsSpanOrFrame(EventType t) {
  switch (t) {
    case EventType::kTurnStarted:
    case EventType::kTurnCompleted:
    case EventType::kModelCall:
    case EventType::kModelResponse:
    case EventType::kModelError:
    case EventType::kToolExecuted:
    case EventType::kToolProgress:
    case EventType::kReplyFinal:
    case EventType::kReplyDelta:
    case EventType::kDeferredExecuted:
      return true;
    default:
      return false;
  }
}

Span Child(const TurnIds& ids, std::string span_id, std::string name, SpanKind kind) {
  Span s;
  s.trace_id = ids.turn.trace_id;
  s.span_id = std::move(span_id);
  s.parent_span_id = ids.turn.span_id;
  s.name = std::move(name);
  s.kind = kind;
  return s;
}

// One model call: from model.call to the response (or the error) it got.
Span ChatSpan(const TurnIds& ids, const TurnTrace& trace, int number, const TraceEvent& call, const TraceEvent& end) {
  const Json c = call.data.json(), d = end.data.json();
  const std::string model = c.value("model", "");
  Span s = Child(ids, DerivedSpanId(ids.turn.span_id + "/chat/" + std::to_string(number)),
                 model.empty() ? "chat" : "chat " + model, SpanKind::kClient);
  s.start_ns = Ns(call.at_ms);
  s.end_ns = Ns(end.at_ms);
  s.attributes = {{"gen_ai.operation.name", "chat"}, {"gen_ai.provider.name", trace.provider}};
  if (!model.empty()) s.attributes.emplace_back("gen_ai.request.model", model);
  if (c.contains("purpose")) s.attributes.emplace_back("reins.model.purpose", c["purpose"]);
  if (end.type == EventType::kModelError) {
    s.error = true;
    s.error_message = d.value("message", "");
    s.attributes.emplace_back("error.type", "model_error");
    return s;
  }
  const Json usage = d.value("usage", Json::object());
  if (usage.contains("input_tokens")) s.attributes.emplace_back("gen_ai.usage.input_tokens", usage["input_tokens"]);
  if (usage.contains("output_tokens")) s.attributes.emplace_back("gen_ai.usage.output_tokens", usage["output_tokens"]);
  s.attributes.emplace_back("gen_ai.response.finish_reasons", Json::array({d.value("finish", "stop")}));
  const Json calls = d.value("tool_calls", Json::array());
  s.attributes.emplace_back("reins.model.tool_calls", static_cast<int64_t>(calls.size()));
  if (trace.capture_content) {
    Json parts = Json::array();
    if (const std::string text = d.value("text", ""); !text.empty()) parts.push_back({{"type", "text"}, {"content", text}});
    for (const Json& c : calls) {
      parts.push_back({{"type", "tool_call"}, {"id", c.value("id", "")}, {"name", c.value("name", "")}, {"arguments", c.value("args", Json())}});
    }
    Json message = {{"role", "assistant"}, {"parts", std::move(parts)}, {"finish_reason", d.value("finish", "stop")}};
    s.attributes.emplace_back("gen_ai.output.messages", JsonText(Json::array({std::move(message)})));
  }
  return s;
}

// A tool that ran: from its start (its latency before the event) to the event.
Span ToolSpan(const TurnIds& ids, std::string span_id, const TraceEvent& e, bool capture_content, bool deferred) {
  const Json d = e.data.json();
  const std::string name = d.value("name", "");
  Span s = Child(ids, std::move(span_id), "execute_tool " + name, SpanKind::kInternal);
  const int64_t latency = std::max<int64_t>(0, d.value("latency_ms", int64_t{0}));
  s.start_ns = Ns(e.at_ms - latency);
  s.end_ns = Ns(e.at_ms);
  s.attributes = {{"gen_ai.operation.name", "execute_tool"}, {"gen_ai.tool.name", name}, {"gen_ai.tool.type", "function"}};
  if (d.contains("call_id")) s.attributes.emplace_back("gen_ai.tool.call.id", d["call_id"]);
  if (deferred) {
    s.attributes.emplace_back("reins.tool.deferred", true);
    if (d.contains("idempotency_key")) s.attributes.emplace_back("reins.idempotency_key", d["idempotency_key"]);
    if (d.contains("mode")) s.attributes.emplace_back("reins.deferred.mode", d["mode"]);
  }
  const bool success = d.value("success", true);
  s.attributes.emplace_back("reins.tool.success", success);
  if (d.contains("next_action")) s.attributes.emplace_back("reins.tool.next_action", d["next_action"]);
  if (capture_content) {
    if (d.contains("args")) s.attributes.emplace_back("gen_ai.tool.call.arguments", JsonText(d["args"]));
    if (d.contains("result")) s.attributes.emplace_back("gen_ai.tool.call.result", JsonText(d["result"]));
  }
  if (!success) {
    s.error = true;
    s.attributes.emplace_back("error.type", "tool_error");
    const Json result = d.value("result", Json::object());
    s.error_message = result.is_object() ? result.value("error", "the tool reported a failure") : "the tool reported a failure";
    if (!capture_content) s.error_message = "the tool reported a failure";
  }
  return s;
}

}  // namespace

TurnIds IdsOfTurn(const std::string& session_id, int turn_number, const std::string& traceparent) {
  const std::string turn = session_id + "#" + std::to_string(turn_number);
  TurnIds ids;
  if (std::optional<TraceContext> caller = ParseTraceparent(traceparent)) {
    ids.turn.trace_id = caller->trace_id;
    ids.turn.sampled = caller->sampled;
    ids.parent_span_id = caller->span_id;
  } else {
    ids.turn.trace_id = DerivedTraceId(turn);
  }
  ids.turn.span_id = DerivedSpanId(ids.turn.trace_id + "/" + turn);
  return ids;
}

std::string ToolSpanId(const TurnIds& turn, int response, int position) {
  return DerivedSpanId(turn.turn.span_id + "/tool/" + std::to_string(response) + "/" + std::to_string(position));
}

std::string DeferredSpanId(const TurnIds& turn, const std::string& idempotency_key) {
  return DerivedSpanId(turn.turn.span_id + "/deferred/" + idempotency_key);
}

std::string TurnTraceparent(const TraceEvent& started) {
  const Json d = started.data.json();
  const auto input = d.find("input");
  if (input == d.end() || !input->is_object()) return "";
  const auto traceparent = input->find("traceparent");
  return traceparent != input->end() && traceparent->is_string() ? traceparent->get<std::string>() : "";
}

std::vector<Span> SpansOfTurn(const TurnTrace& trace) {
  auto started = std::find_if(trace.events.begin(), trace.events.end(),
                              [](const TraceEvent& e) { return e.type == EventType::kTurnStarted; });
  if (started == trace.events.end()) return {};
  const TurnIds ids = IdsOfTurn(trace.session_id, started->turn, TurnTraceparent(*started));
  Span turn;
  turn.trace_id = ids.turn.trace_id;
  turn.span_id = ids.turn.span_id;
  turn.parent_span_id = ids.parent_span_id;
  turn.name = "invoke_agent " + trace.agent;
  turn.kind = SpanKind::kInternal;
  turn.start_ns = Ns(started->at_ms);
  turn.end_ns = Ns(trace.events.back().at_ms);
  turn.attributes = {{"gen_ai.operation.name", "invoke_agent"},
                     {"gen_ai.agent.name", trace.agent},
                     {"gen_ai.provider.name", trace.provider},
                     {"gen_ai.conversation.id", trace.session_id},
                     {"reins.turn.id", started->data.value("turn_id", "")},
                     {"reins.turn.number", started->turn},
                     {"reins.speaker", started->data.value("speaker", "")}};
  std::vector<Span> children;
  int64_t input_tokens = 0, output_tokens = 0;
  const TraceEvent* open_call = nullptr;
  int calls = 0;
  for (const TraceEvent& e : trace.events) {
    switch (e.type) {
      case EventType::kModelCall:
        open_call = &e;
        break;
      case EventType::kModelResponse:
      case EventType::kModelError:
        if (open_call != nullptr) children.push_back(ChatSpan(ids, trace, ++calls, *open_call, e));
        open_call = nullptr;
        if (const Json usage = e.data.value("usage", Json()); usage.is_object()) {
          input_tokens += usage.value("input_tokens", int64_t{0});
          output_tokens += usage.value("output_tokens", int64_t{0});
        }
        break;
      case EventType::kToolExecuted: {
        const Json d = e.data.json();
        children.push_back(ToolSpan(ids, ToolSpanId(ids, d.value("response", 0), d.value("position", 0)), e,
                                    trace.capture_content, false));
        break;
      }
      case EventType::kTurnCompleted: {
        const std::string status = e.data.value("status", "");
        turn.attributes.emplace_back("reins.turn.status", status);
        if (status == "failed") turn.error = true;
        break;
      }
      case EventType::kTurnFailed:
        turn.error = true;
        turn.error_message = e.data.value("error", "");
        turn.events.push_back({"reins.turn.failed", Ns(e.at_ms), {}});
        break;
      default:
        if (!IsSpanOrFrame(e.type)) {
          turn.events.push_back({"reins." + std::string(e.name()), Ns(e.at_ms), DataAttributes(e.data.json(), trace.capture_content)});
        }
        break;
    }
  }
  if (input_tokens > 0 || output_tokens > 0) {
    turn.attributes.emplace_back("gen_ai.usage.input_tokens", input_tokens);
    turn.attributes.emplace_back("gen_ai.usage.output_tokens", output_tokens);
  }
  std::vector<Span> out;
  out.reserve(children.size() + 1);
  out.push_back(std::move(turn));
  for (Span& child : children) out.push_back(std::move(child));
  return out;
}

Span SpanOfDeferredRun(const TurnIds& ids, const std::string& session_id, const TraceEvent& ran, bool capture_content) {
  Span s = ToolSpan(ids, DeferredSpanId(ids, ran.data.value("idempotency_key", "")), ran, capture_content, true);
  s.attributes.emplace_back("gen_ai.conversation.id", session_id);
  return s;
}

}  // namespace reins::telemetry
