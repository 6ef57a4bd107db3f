// OpenAI Chat Completions (POST {base}/chat/completions), streamed or not; the mapping
// is described in docs/providers.md. The stream assembler rebuilds the
// whole-response JSON and runs it through the same parser as a non-streamed body, so
// both paths give the same ModelResponse by construction.
#include <map>

#include "model/wire_common.h"
#include "model/wire_format.h"

namespace reins {
namespace {

using wire::Array;
using wire::Find;
using wire::Int;
using wire::Object;
using wire::String;

// ---- Request -------------------------------------------------------------------------

Json ToolCallJson(const ToolCall& call) {
  Json function = {{"name", call.name},
                   {"arguments", call.arguments_text.empty() ? wire::Dump(call.args) : call.arguments_text}};
  return {{"id", call.id}, {"type", "function"}, {"function", std::move(function)}};
}

// OpenAI has no is_error flag on tool results: an explicit {"error": ...} object is how
// the model learns that the call failed. Envelopes that already say so pass unchanged.
std::string ToolResultContent(const Message& m) {
  if (!m.is_error) return m.text;
  Json parsed = wire::Parse(m.text);
  if (parsed.is_object() && parsed.contains("error")) return m.text;
  return wire::Dump(Json{{"error", m.text}});
}

Json AssistantJson(const Message& m) {
  Json out = {{"role", "assistant"}};
  if (m.tool_calls.empty()) {
    out["content"] = m.text;  // null content is only accepted next to tool_calls
    return out;
  }
  out["content"] = m.text.empty() ? Json(nullptr) : Json(m.text);
  Json calls = Json::array();
  for (const ToolCall& call : m.tool_calls) calls.push_back(ToolCallJson(call));
  out["tool_calls"] = std::move(calls);
  return out;
}

Json MessageJson(const Message& m, bool label_speakers) {
  switch (m.role) {
    case Role::kSystem: return {{"role", "system"}, {"content", m.text}};
    case Role::kUser: return {{"role", "user"}, {"content", wire::UserText(m, label_speakers)}};
    case Role::kAssistant: return AssistantJson(m);
    case Role::kTool: break;
  }
  return {{"role", "tool"}, {"tool_call_id", m.tool_call_id}, {"content", ToolResultContent(m)}};
}

Json ToolsJson(const std::vector<ToolSpec>& tools) {
  Json out = Json::array();
  for (const ToolSpec& t : tools) {
    Json function = {
        {"name", t.name}, {"description", t.description}, {"parameters", wire::InputSchema(t.input_schema)}};
    out.push_back({{"type", "function"}, {"function", std::move(function)}});
  }
  return out;
}

Json ToolChoiceJson(const ToolChoice& choice) {
  switch (choice.mode) {
    case ToolChoice::Mode::kAuto: return "auto";
    case ToolChoice::Mode::kRequired: return "required";
    case ToolChoice::Mode::kNone: return "none";
    case ToolChoice::Mode::kNamed: break;
  }
  return {{"type", "function"}, {"function", {{"name", choice.name}}}};
}

Json ResponseFormatJson(const Json& schema) {
  // strict:false: strict mode rejects common schema features (optional properties,
  // missing additionalProperties:false); the runtime validates the answer itself.
  Json json_schema = {{"name", "response"}, {"schema", schema}, {"strict", false}};
  return {{"type", "json_schema"}, {"json_schema", std::move(json_schema)}};
}

void AddOptions(const ModelConfig& config, bool has_tools, Json& body) {
  if (config.temperature) body["temperature"] = *config.temperature;
  if (auto n = wire::OptionInt(config, "max_tokens")) body["max_tokens"] = *n;
  // Newer models take only max_completion_tokens; pass it through as well when given.
  if (auto n = wire::OptionInt(config, "max_completion_tokens")) body["max_completion_tokens"] = *n;
  // The API rejects parallel_tool_calls on a request without tools.
  if (auto p = wire::OptionBool(config, "parallel_tool_calls"); p && has_tools) body["parallel_tool_calls"] = *p;
}

std::string BuildRequestBody(const ModelConfig& config, const ModelRequest& request, bool stream) {
  Json body = {{"model", config.model}};
  Json messages = Json::array();
  const bool label_speakers = wire::SeveralSpeakers(request.messages);
  for (const Message& m : request.messages) messages.push_back(MessageJson(m, label_speakers));
  body["messages"] = std::move(messages);
  const bool has_tools = request.tools != nullptr && !request.tools->empty();
  if (has_tools) {
    body["tools"] = ToolsJson(*request.tools);
    body["tool_choice"] = ToolChoiceJson(request.tool_choice);
  }
  AddOptions(config, has_tools, body);
  if (request.response_schema) body["response_format"] = ResponseFormatJson(*request.response_schema);
  if (stream) {
    body["stream"] = true;
    body["stream_options"] = {{"include_usage", true}};
  }
  return wire::Dump(body);
}

// ---- Response ------------------------------------------------------------------------

// The provider's message from a JSON error body: {"error":{"message":S}}, or the bare
// {"error":S} some compatible servers send. "" when there is none.
std::string ErrorText(const Json& body) {
  const Json* error = Find(body, "error");
  if (error == nullptr) return "";
  if (error->is_string()) return error->get<std::string>();
  return String(*error, "message");
}

bool HasError(const Json& body) {
  const Json* error = Find(body, "error");
  return error != nullptr && !error->is_null();
}

Status ErrorStatus(const Json& body) {
  std::string said = ErrorText(body);
  if (said.empty()) said = "error without a message: " + wire::Snippet(wire::Dump(body));
  return Unavailable(said);
}

// choices[0].message.content: a string, null, or (some compatible servers) an array of
// {"type":"text","text":S} parts.
std::string ContentText(const Json* content) {
  if (content == nullptr) return "";
  if (content->is_string()) return content->get<std::string>();
  std::string text;
  if (content->is_array()) {
    for (const Json& part : *content) text += String(part, "text");
  }
  return text;
}

ToolCall ParseToolCall(const Json& call) {
  const Json* function = Object(call, "function");
  const Json* arguments = function != nullptr ? Find(*function, "arguments") : nullptr;
  return wire::MakeToolCall(String(call, "id"), function != nullptr ? String(*function, "name") : "",
                            arguments != nullptr ? *arguments : Json(""));
}

Result<ModelResponse> ParseResponse(const Json& body, bool structured) {
  if (!body.is_object()) return InvalidArgument("openai response is not a JSON object");
  if (HasError(body)) return ErrorStatus(body);
  const Json* choices = Array(body, "choices");
  if (choices == nullptr || choices->empty()) return InvalidArgument("openai response has no choices");
  const Json* message = Object((*choices)[0], "message");
  if (message == nullptr) return InvalidArgument("openai response choice has no message");
  ModelResponse response;
  response.text = ContentText(Find(*message, "content"));
  if (std::string refusal = String(*message, "refusal"); !refusal.empty()) {
    // The model declined: its words are kept, but this is no answer to deliver as one.
    if (response.text.empty()) response.text = refusal;
    response.finish = FinishReason::kRefusal;
  }
  if (const Json* calls = Array(*message, "tool_calls")) {
    for (const Json& call : *calls) {
      if (call.is_object()) response.tool_calls.push_back(ParseToolCall(call));
    }
  }
  const std::string finish = String((*choices)[0], "finish_reason");
  if (finish == "length") response.finish = FinishReason::kLength;
  // Filtered with nothing left to say: as good as a refusal.
  if (finish == "content_filter" && response.tool_calls.empty() && response.text.empty()) {
    response.finish = FinishReason::kRefusal;
  }
  if (const Json* usage = Object(body, "usage")) {
    response.usage.input_tokens = Int(*usage, "prompt_tokens");
    response.usage.output_tokens = Int(*usage, "completion_tokens");
  }
  if (structured) response.json = wire::JsonObjectIn(response.text);
  return response;
}

// ---- Stream --------------------------------------------------------------------------

class OpenAIAssembler : public StreamAssembler {
 public:
  OpenAIAssembler(bool structured, TextDeltaFn on_text) : structured_(structured), on_text_(std::move(on_text)) {}

  Status OnEvent(const SseEvent& event) override {
    if (done_) return OkStatus();  // nothing after [DONE] belongs to this response
    std::string_view data = wire::Trim(event.data);
    if (data.empty()) return OkStatus();
    if (data == "[DONE]") {
      done_ = true;
      return OkStatus();
    }
    Json chunk = wire::Parse(data);
    if (!chunk.is_object()) return InvalidArgument("malformed stream chunk: " + wire::Snippet(data));
    if (HasError(chunk)) return ErrorStatus(chunk);
    if (const Json* choices = Array(chunk, "choices")) {
      for (const Json& choice : *choices) {
        if (Int(choice, "index") != 0) continue;
        if (const Json* delta = Object(choice, "delta")) Delta(*delta);
        if (std::string finish = String(choice, "finish_reason"); !finish.empty()) finish_reason_ = finish;
      }
    }
    if (const Json* usage = Object(chunk, "usage")) usage_ = *usage;
    return OkStatus();
  }

  bool Complete() const override { return done_; }

  Result<ModelResponse> Finish() override {
    if (!done_) return Aborted("stream ended before [DONE]");
    return ParseResponse(WholeResponse(), structured_);
  }

 private:
  struct PendingCall {
    std::string id;
    std::string name;
    std::string arguments;
  };

  void Delta(const Json& delta) {
    if (std::string text = String(delta, "content"); !text.empty()) {
      content_ += text;
      Emit(text);
    }
    // A refusal becomes the reply text when there is no content (as in ParseResponse).
    if (std::string text = String(delta, "refusal"); !text.empty()) {
      refusal_ += text;
      if (content_.empty()) Emit(text);
    }
    if (const Json* fragments = Array(delta, "tool_calls")) {
      for (const Json& fragment : *fragments) Fragment(fragment);
    }
  }

  // The first fragment of a call carries id and name; later ones append arguments.
  // Calls are keyed by index because several may be streamed interleaved.
  void Fragment(const Json& fragment) {
    if (!fragment.is_object()) return;
    PendingCall& call = calls_[Int(fragment, "index")];
    if (call.id.empty()) call.id = String(fragment, "id");
    const Json* function = Object(fragment, "function");
    if (function == nullptr) return;
    if (call.name.empty()) call.name = String(*function, "name");
    call.arguments += String(*function, "arguments");
  }

  void Emit(std::string_view text) {
    if (on_text_) on_text_(text);
  }

  Json WholeResponse() const {
    Json message = {{"role", "assistant"}, {"content", content_}};
    if (!refusal_.empty()) message["refusal"] = refusal_;
    Json tool_calls = Json::array();
    for (const auto& [index, call] : calls_) {  // std::map: in index order
      Json function = {{"name", call.name}, {"arguments", call.arguments}};
      tool_calls.push_back({{"id", call.id}, {"type", "function"}, {"function", std::move(function)}});
    }
    if (!tool_calls.empty()) message["tool_calls"] = std::move(tool_calls);
    Json choice = {{"index", 0}, {"message", std::move(message)}};
    if (!finish_reason_.empty()) choice["finish_reason"] = finish_reason_;
    Json body = {{"choices", Json::array({std::move(choice)})}};
    if (!usage_.is_null()) body["usage"] = usage_;
    return body;
  }

  bool structured_;
  TextDeltaFn on_text_;
  bool done_ = false;
  std::string content_;
  std::string refusal_;
  std::string finish_reason_;
  std::map<int, PendingCall> calls_;
  Json usage_;
};

// ---- Format --------------------------------------------------------------------------

class OpenAIWire : public WireFormat {
 public:
  std::string_view Provider() const override { return "openai"; }
  std::string DefaultBaseUrl() const override { return "https://api.openai.com/v1"; }
  std::string Path() const override { return "/chat/completions"; }

  std::vector<HttpHeader> Headers(const ModelConfig& config) const override {
    std::vector<HttpHeader> headers;
    // Local OpenAI-compatible servers often need no key.
    if (!config.api_key.empty()) headers.push_back({"Authorization", "Bearer " + config.api_key});
    return headers;
  }

  std::string BuildBody(const ModelConfig& config, const ModelRequest& request, bool stream) const override {
    return BuildRequestBody(config, request, stream);
  }

  Result<ModelResponse> ParseBody(std::string_view body, const ModelRequest& request) const override {
    Json parsed = wire::Parse(body);
    if (parsed.is_discarded()) return InvalidArgument("openai response is not JSON: " + wire::Snippet(body));
    return ParseResponse(parsed, request.response_schema.has_value());
  }

  std::unique_ptr<StreamAssembler> NewAssembler(const ModelRequest& request, TextDeltaFn on_text) const override {
    return std::make_unique<OpenAIAssembler>(request.response_schema.has_value(), std::move(on_text));
  }

  std::string ErrorMessage(std::string_view body) const override { return ErrorText(wire::Parse(body)); }
};

}  // namespace

std::unique_ptr<WireFormat> MakeOpenAIWire() { return std::make_unique<OpenAIWire>(); }

}  // namespace reins
