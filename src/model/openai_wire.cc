// OpenAI Chat Completions (POST {base}/chat/completions), streamed or not; the mapping
// is described in docs/providers.md. The stream assembler rebuilds the
// whole-response JSON and runs it through the same parser as a non-streamed body, so
// both paths give the same ModelResponse by construction.
#include <map>

#include "domain/history_text.h"
#include "domain/json_parse.h"
#include "domain/json_text.h"
#include "model/openai_answer.h"
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
//
// The body is written straight to text (JsonObjectText): it is built twice per turn and
// its DOM, built, copied and destroyed only to be dumped once, cost more than the rest
// of the model call. Keys are written in sorted order, byte for byte the text the DOM
// gave (tests/model/openai_wire_test.cc holds the two side by side).

// OpenAI has no is_error flag on tool results: an explicit {"error": ...} object is how
// the model learns that the call failed. Envelopes that already say so pass unchanged.
std::string ToolResultContent(const Message& m) {
  if (!m.is_error) return m.text;
  Json parsed = wire::Parse(m.text);
  if (parsed.is_object() && parsed.contains("error")) return m.text;
  return wire::Dump(Json{{"error", m.text}});
}

void AppendToolCall(std::string& out, const ToolCall& call) {
  JsonObjectText c(out);
  JsonObjectText function(c.Key("function"));
  function.String("arguments", call.arguments_text.empty() ? JsonText(call.args) : call.arguments_text);
  function.String("name", call.name);
  function.Close();
  c.String("id", call.id);
  c.String("type", "function");
  c.Close();
}

void AppendMessage(std::string& out, const Message& m, bool label_speakers) {
  JsonObjectText o(out);
  switch (m.role) {
    case Role::kSystem:
      o.String("content", m.text);
      o.String("role", "system");
      break;
    case Role::kUser:
      o.String("content", wire::UserText(m, label_speakers));
      o.String("role", "user");
      break;
    case Role::kAssistant:
      if (m.tool_calls.empty()) {
        o.String("content", m.text);  // null content is only accepted next to tool_calls
        o.String("role", "assistant");
        break;
      }
      if (m.text.empty()) {
        o.Raw("content", "null");
      } else {
        o.String("content", m.text);
      }
      o.String("role", "assistant");
      {
        std::string& calls = o.Key("tool_calls");
        calls += '[';
        for (size_t i = 0; i < m.tool_calls.size(); ++i) {
          if (i > 0) calls += ',';
          AppendToolCall(calls, m.tool_calls[i]);
        }
        calls += ']';
      }
      break;
    case Role::kTool:
      o.String("content", ToolResultContent(m));
      o.String("role", "tool");
      o.String("tool_call_id", m.tool_call_id);
      break;
  }
  o.Close();
}

// The text of the history's earlier messages, request.messages[1 .. 1 + history_final),
// after a comma, from the session's HistoryText, which gets what it lacks written first.
void AppendHistory(std::string& out, const ModelRequest& request, bool label_speakers) {
  HistoryText& kept = *request.history_text;
  static const char kWriter = 0;  // this wire format's tag
  if (kept.writer != &kWriter || kept.labelled != label_speakers) {
    kept.Truncate(0);
    kept.writer = &kWriter;
    kept.labelled = label_speakers;
  }
  kept.Truncate(request.history_final);  // never more than what this request calls earlier
  for (size_t i = kept.messages(); i < request.history_final; ++i) {
    if (i > 0) kept.text += ',';
    AppendMessage(kept.text, request.messages[1 + i], label_speakers);
    kept.Ended();
  }
  if (kept.messages() == 0) return;
  out += ',';
  out += kept.text;
}

void AppendTools(std::string& out, const std::vector<ToolSpec>& tools) {
  out += '[';
  for (size_t i = 0; i < tools.size(); ++i) {
    if (i > 0) out += ',';
    JsonObjectText tool(out);
    JsonObjectText function(tool.Key("function"));
    function.String("description", tools[i].description);
    function.String("name", tools[i].name);
    if (tools[i].input_schema.is_object()) {
      function.Value("parameters", tools[i].input_schema);
    } else {
      function.Value("parameters", wire::InputSchema(tools[i].input_schema));
    }
    function.Close();
    tool.String("type", "function");
    tool.Close();
  }
  out += ']';
}

std::string ToolsArray(const std::vector<ToolSpec>& tools) {
  std::string out;
  AppendTools(out, tools);
  return out;
}

void AppendToolChoice(std::string& out, const ToolChoice& choice) {
  switch (choice.mode) {
    case ToolChoice::Mode::kAuto: out += R"("auto")"; return;
    case ToolChoice::Mode::kRequired: out += R"("required")"; return;
    case ToolChoice::Mode::kNone: out += R"("none")"; return;
    case ToolChoice::Mode::kNamed: break;
  }
  out += R"({"function":{"name":)";
  AppendJsonString(out, choice.name);
  out += R"(},"type":"function"})";
}

std::string BuildRequestBody(const ModelConfig& config, const ModelRequest& request, bool stream,
                             const wire::ToolsText& tools_text) {
  const bool has_tools = request.tools != nullptr && !request.tools->empty();
  const std::shared_ptr<const std::string> tools = has_tools ? tools_text.Of(request.tools) : nullptr;
  std::string out;
  out.reserve(wire::BodySizeHint(request) + (tools ? tools->size() : 0));
  JsonObjectText body(out);
  // Newer models take only max_completion_tokens; pass it through as well when given.
  if (auto n = wire::OptionInt(config, "max_completion_tokens")) body.Value("max_completion_tokens", Json(*n));
  if (auto n = wire::OptionInt(config, "max_tokens")) body.Value("max_tokens", Json(*n));
  {
    std::string& messages = body.Key("messages");
    messages += '[';
    const bool label_speakers = wire::SeveralSpeakers(request.messages);
    size_t next = 0;
    if (request.history_text != nullptr && request.history_final < request.messages.size()) {
      AppendMessage(messages, request.messages[0], label_speakers);  // the system prompt, which changes
      AppendHistory(messages, request, label_speakers);
      next = 1 + request.history_final;
    }
    for (size_t i = next; i < request.messages.size(); ++i) {
      if (i > 0) messages += ',';
      AppendMessage(messages, request.messages[i], label_speakers);
    }
    messages += ']';
  }
  body.String("model", config.model);
  // The API rejects parallel_tool_calls on a request without tools.
  if (auto p = wire::OptionBool(config, "parallel_tool_calls"); p && has_tools) {
    body.Raw("parallel_tool_calls", *p ? "true" : "false");
  }
  if (request.response_schema) {
    // strict:false: strict mode rejects common schema features (optional properties,
    // missing additionalProperties:false); the runtime validates the answer itself.
    JsonObjectText format(body.Key("response_format"));
    JsonObjectText json_schema(format.Key("json_schema"));
    json_schema.String("name", "response");
    json_schema.Value("schema", *request.response_schema);
    json_schema.Raw("strict", "false");
    json_schema.Close();
    format.String("type", "json_schema");
    format.Close();
  }
  if (stream) {
    body.Raw("stream", "true");
    body.Raw("stream_options", R"({"include_usage":true})");
  }
  if (config.temperature) body.Value("temperature", Json(*config.temperature));
  if (has_tools) {
    AppendToolChoice(body.Key("tool_choice"), request.tool_choice);
    body.Raw("tools", *tools);
  }
  body.Close();
  return out;
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

// What ParseResponse reads of an answer, the only members built of it: the rest (ids,
// timestamps, token details, log probabilities) is checked but not kept.
const JsonShape kUsageShape{{{"prompt_tokens"}, {"completion_tokens"}}};
const JsonShape kMessageShape{{{"content"}, {"refusal"}, {"tool_calls"}}};
const JsonShape kChoiceShape{{{"message", &kMessageShape}, {"finish_reason"}}};
const JsonShape kResponseShape{{{"error"}, {"choices", &kChoiceShape}, {"usage", &kUsageShape}}};

Result<ModelResponse> ParseResponse(const Json& body, bool structured) {
  if (!body.is_object()) return InvalidArgument("openai response is not a JSON object");
  if (HasError(body)) return ErrorStatus(body);
  const Json* choices = Array(body, "choices");
  if (choices == nullptr || choices->empty()) return InvalidArgument("openai response has no choices");
  const Json* message = Object((*choices)[0], "message");
  if (message == nullptr) return InvalidArgument("openai response choice has no message");
  openai::Answer answer;
  answer.content = ContentText(Find(*message, "content"));
  answer.refusal = String(*message, "refusal");
  if (const Json* calls = Array(*message, "tool_calls")) {
    for (const Json& call : *calls) {
      if (call.is_object()) answer.tool_calls.push_back(ParseToolCall(call));
    }
  }
  answer.finish_reason = String((*choices)[0], "finish_reason");
  answer.model = String(body, "model");
  if (const Json* usage = Object(body, "usage")) {
    answer.input_tokens = Int(*usage, "prompt_tokens");
    answer.output_tokens = Int(*usage, "completion_tokens");
  }
  return openai::Respond(std::move(answer), structured);
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
    if (model_.empty()) model_ = String(chunk, "model");
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
    if (!model_.empty()) body["model"] = model_;
    return body;
  }

  bool structured_;
  TextDeltaFn on_text_;
  bool done_ = false;
  std::string content_;
  std::string refusal_;
  std::string finish_reason_;
  std::string model_;
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
    return BuildRequestBody(config, request, stream, tools_text_);
  }

  Result<ModelResponse> ParseBody(std::string_view body, const ModelRequest& request) const override {
    // The usual answer in one pass (openai_answer.h); any other as a DOM.
    if (openai::Answer answer; openai::ReadUsualAnswer(body, answer)) {
      return openai::Respond(std::move(answer), request.response_schema.has_value());
    }
    Result<Json> parsed = ParseJsonShaped(body, kResponseShape);
    if (!parsed.ok()) return InvalidArgument("openai response is not JSON: " + wire::Snippet(body));
    // An error without a message is reported with the whole body, as it came.
    if (HasError(*parsed)) return ErrorStatus(wire::Parse(body));
    return ParseResponse(*parsed, request.response_schema.has_value());
  }

  std::unique_ptr<StreamAssembler> NewAssembler(const ModelRequest& request, TextDeltaFn on_text) const override {
    return std::make_unique<OpenAIAssembler>(request.response_schema.has_value(), std::move(on_text));
  }

  std::string ErrorMessage(std::string_view body) const override { return ErrorText(wire::Parse(body)); }

 private:
  wire::ToolsText tools_text_{&ToolsArray};
};

}  // namespace

std::unique_ptr<WireFormat> MakeOpenAIWire() { return std::make_unique<OpenAIWire>(); }

}  // namespace reins
