#include "telemetry/turn_spans.h"

#include <algorithm>
#include <array>

#include "domain/json_parse.h"
#include "domain/json_text.h"

namespace reins::telemetry {
namespace {

int64_t Ns(int64_t ms) { return ms * 1000000; }

// Fields of an event's data that hold what a person or a model wrote, or what a tool
// was given or returned: on spans only with capture_content.
bool IsContent(std::string_view field) {
  static constexpr std::array<std::string_view, 16> kContent = {
      "text", "args", "result", "before", "after", "question", "options", "sentence", "tool_calls",
      "verdict", "steps", "input", "message", "instruction", "progress", "prompt"};
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

// The fields a span reads are found in the events' text (MemberText and its readers):
// only a response's tool calls, and content when it is captured, are parsed.

// One model call: from model.call to the response (or the error) it got.
Span ChatSpan(const TurnIds& ids, const TurnTrace& trace, int number, const TraceEvent& call, const TraceEvent& end) {
  const std::string_view c = call.data.text(), d = end.data.text();
  const std::string model = MemberString(c, "model").value_or("");
  Span s = Child(ids, ChatSpanId(ids, number), model.empty() ? "chat" : "chat " + model, SpanKind::kClient);
  s.start_ns = Ns(call.at_ms);
  s.end_ns = Ns(end.at_ms);
  s.attributes = {{"gen_ai.operation.name", "chat"}, {"gen_ai.provider.name", trace.provider}};
  if (!model.empty()) s.attributes.emplace_back("gen_ai.request.model", model);
  if (std::optional<std::string> purpose = MemberString(c, "purpose")) {
    s.attributes.emplace_back("reins.model.purpose", *purpose);
  }
  if (end.type == EventType::kModelError) {
    s.error = true;
    s.error_message = MemberString(d, "message").value_or("");
    s.attributes.emplace_back("error.type", "model_error");
    return s;
  }
  if (std::optional<std::string_view> usage = MemberText(d, "usage")) {
    std::optional<int64_t> n = MemberInt(*usage, "input_tokens");
    if (n) s.attributes.emplace_back("gen_ai.usage.input_tokens", *n);
    n = MemberInt(*usage, "output_tokens");
    if (n) s.attributes.emplace_back("gen_ai.usage.output_tokens", *n);
  }
  if (std::optional<std::string> answered_by = MemberString(d, "model")) {
    s.attributes.emplace_back("gen_ai.response.model", *answered_by);
  }
  Json calls = ParseJsonOrDiscarded(MemberText(d, "tool_calls").value_or("[]"), kMaxStoredJsonDepth);
  if (!calls.is_array()) calls = Json::array();
  // The provider's own reason where it gave one ("tool_calls", "end_turn"); else reins'
  // reading of the response, named as OpenAI names it.
  const std::string finish = MemberString(d, "provider_finish")
                                 .value_or(MemberString(d, "finish").value_or(calls.empty() ? "stop" : "tool_calls"));
  s.attributes.emplace_back("gen_ai.response.finish_reasons", Json::array({finish}));
  s.attributes.emplace_back("reins.model.tool_calls", static_cast<int64_t>(calls.size()));
  if (trace.capture_content) {
    Json parts = Json::array();
    if (const std::string text = MemberString(d, "text").value_or(""); !text.empty()) {
      parts.push_back({{"type", "text"}, {"content", text}});
    }
    for (const Json& c : calls) {
      // The arguments as the model wrote them: their value when they are JSON, else the text.
      const std::string written = c.value("arguments", "");
      Json arguments = ParseJsonOrDiscarded(written);
      if (arguments.is_discarded()) arguments = written;
      parts.push_back(
          {{"type", "tool_call"}, {"id", c.value("id", "")}, {"name", c.value("name", "")}, {"arguments", arguments}});
    }
    Json message = {{"role", "assistant"}, {"parts", std::move(parts)}, {"finish_reason", finish}};
    s.attributes.emplace_back("gen_ai.output.messages", JsonText(Json::array({std::move(message)})));
  }
  return s;
}

// A tool that ran: from its start (its latency before the event) to the event.
Span ToolSpan(const TurnIds& ids, std::string span_id, const TraceEvent& e, bool capture_content, bool deferred) {
  const std::string_view d = e.data.text();
  const std::string name = MemberString(d, "name").value_or("");
  Span s = Child(ids, std::move(span_id), "execute_tool " + name, SpanKind::kInternal);
  const int64_t latency = std::max<int64_t>(0, MemberInt(d, "latency_ms").value_or(0));
  s.start_ns = Ns(e.at_ms - latency);
  s.end_ns = Ns(e.at_ms);
  s.attributes = {{"gen_ai.operation.name", "execute_tool"}, {"gen_ai.tool.name", name}, {"gen_ai.tool.type", "function"}};
  if (std::optional<std::string> id = MemberString(d, "call_id")) s.attributes.emplace_back("gen_ai.tool.call.id", *id);
  if (deferred) {
    s.attributes.emplace_back("reins.tool.deferred", true);
    if (std::optional<std::string> key = MemberString(d, "idempotency_key")) {
      s.attributes.emplace_back("reins.idempotency_key", *key);
    }
    if (std::optional<std::string> mode = MemberString(d, "mode")) s.attributes.emplace_back("reins.deferred.mode", *mode);
  }
  const bool success = MemberText(d, "success") != "false";  // absent: a success
  s.attributes.emplace_back("reins.tool.success", success);
  // Its result is outside data (untrusted_data, docs/security.md).
  if (MemberText(d, "untrusted") == "true") s.attributes.emplace_back("reins.tool.untrusted", true);
  if (std::optional<std::string> next = MemberString(d, "next_action")) {
    s.attributes.emplace_back("reins.tool.next_action", *next);
  }
  const std::optional<std::string_view> result = MemberText(d, "result");
  if (capture_content) {
    // An event's text is compact, as JsonText writes it: a member's text is its JsonText.
    if (std::optional<std::string_view> args = MemberText(d, "args")) {
      s.attributes.emplace_back("gen_ai.tool.call.arguments", std::string(*args));
    }
    if (result) s.attributes.emplace_back("gen_ai.tool.call.result", std::string(*result));
  }
  if (!success) {
    s.error = true;
    s.attributes.emplace_back("error.type", "tool_error");
    s.error_message = "the tool reported a failure";
    if (capture_content && result) s.error_message = MemberString(*result, "error").value_or(s.error_message);
  }
  return s;
}

}  // namespace

TurnIds IdsOfTurn(std::string_view session_id, int turn_number, const std::string& traceparent) {
  const std::string turn = std::string(session_id).append("#").append(std::to_string(turn_number));
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

std::string ChatSpanId(const TurnIds& turn, int number) {
  return DerivedSpanId(turn.turn.span_id + "/chat/" + std::to_string(number));
}

std::string ToolSpanId(const TurnIds& turn, int response, int position) {
  return DerivedSpanId(turn.turn.span_id + "/tool/" + std::to_string(response) + "/" + std::to_string(position));
}

std::string DeferredSpanId(const TurnIds& turn, const std::string& idempotency_key) {
  return DerivedSpanId(turn.turn.span_id + "/deferred/" + idempotency_key);
}

std::string TurnTraceparent(const TraceEvent& started) {
  const std::optional<std::string_view> input = MemberText(started.data.text(), "input");
  return input ? MemberString(*input, "traceparent").value_or("") : "";
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
                     {"reins.turn.id", MemberString(started->data.text(), "turn_id").value_or("")},
                     {"reins.turn.number", started->turn},
                     {"reins.speaker", MemberString(started->data.text(), "speaker").value_or("")}};
  std::vector<Span> children;
  int64_t input_tokens = 0, output_tokens = 0;
  const TraceEvent* open_call = nullptr;
  int calls = 0;
  for (const TraceEvent& e : trace.events) {
    switch (e.type) {
      case EventType::kModelCall:  // numbered as the model loop numbers them (ChatSpanId)
        open_call = &e;
        ++calls;
        break;
      case EventType::kModelResponse:
      case EventType::kModelError:
        if (open_call != nullptr) children.push_back(ChatSpan(ids, trace, calls, *open_call, e));
        open_call = nullptr;
        if (const std::optional<std::string_view> usage = MemberText(e.data.text(), "usage")) {
          input_tokens += MemberInt(*usage, "input_tokens").value_or(0);
          output_tokens += MemberInt(*usage, "output_tokens").value_or(0);
        }
        break;
      case EventType::kToolExecuted: {
        const std::string_view d = e.data.text();
        const int response = static_cast<int>(MemberInt(d, "response").value_or(0));
        const int position = static_cast<int>(MemberInt(d, "position").value_or(0));
        children.push_back(ToolSpan(ids, ToolSpanId(ids, response, position), e, trace.capture_content, false));
        break;
      }
      case EventType::kTurnCompleted: {
        const std::string status = MemberString(e.data.text(), "status").value_or("");
        turn.attributes.emplace_back("reins.turn.status", status);
        if (status == "failed") turn.error = true;
        break;
      }
      case EventType::kTurnFailed:
        turn.error = true;
        turn.error_message = MemberString(e.data.text(), "error").value_or("");
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
  Span s = ToolSpan(ids, DeferredSpanId(ids, MemberString(ran.data.text(), "idempotency_key").value_or("")), ran,
                    capture_content, true);
  s.attributes.emplace_back("gen_ai.conversation.id", session_id);
  return s;
}

}  // namespace reins::telemetry
