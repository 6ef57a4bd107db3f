// Anthropic Messages (POST {base}/v1/messages, anthropic-version 2023-06-01), streamed
// or not; the mapping is described in docs/providers.md. The stream
// assembler rebuilds the whole-response JSON and runs it through the same parser as a
// non-streamed body, so both paths give the same ModelResponse by construction.
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "domain/json_text.h"
#include "model/wire_common.h"
#include "model/wire_format.h"

namespace reins {
namespace {

using wire::Array;
using wire::Find;
using wire::Int;
using wire::Object;
using wire::String;

// Structured output rides on a forced tool call: the tool's input is the answer.
constexpr const char* kRespondTool = "respond";
constexpr int kDefaultMaxTokens = 4096;  // the API requires max_tokens

// ---- Request -------------------------------------------------------------------------

// The API rejects empty and whitespace-only text blocks.
bool Blank(std::string_view text) { return wire::Trim(text).empty(); }

// {"text":T,"type":"text"}, as a block's JSON text.
std::string TextBlock(std::string_view text) {
  std::string out;
  JsonObjectText block(out);
  block.String("text", text);
  block.String("type", "text");
  block.Close();
  return out;
}

// The system prompt is a top-level field, not a message.
std::string SystemText(const std::vector<Message>& messages) {
  std::string system;
  for (const Message& m : messages) {
    if (m.role != Role::kSystem || m.text.empty()) continue;
    if (!system.empty()) system += "\n\n";
    system += m.text;
  }
  return system;
}

// Builds `messages` as text, keeping user and assistant strictly alternating:
// consecutive messages of one role (several tool results, a tool result and the next
// user text, two user texts) share one API message. Written without a DOM (a 21-message
// history took 36 µs through one, docs/PERFORMANCE.md round 9); each object's keys in
// sorted order, the bytes nlohmann's dump gave.
class Conversation {
 public:
  explicit Conversation(bool label_speakers) : label_speakers_(label_speakers) {}

  void Add(const Message& m) {
    switch (m.role) {
      case Role::kSystem: return;  // see SystemText
      case Role::kUser: return AddUser(m);
      case Role::kAssistant: return AddAssistant(m);
      case Role::kTool: return AddToolResult(m);
    }
  }

  // Appends the `messages` array.
  void AppendTo(std::string& out) const {
    out += '[';
    for (size_t i = 0; i < messages_.size(); ++i) {
      if (i > 0) out += ',';
      JsonObjectText message(out);
      std::string& content = message.Key("content");
      content += '[';
      for (size_t b = 0; b < messages_[i].blocks.size(); ++b) {
        if (b > 0) content += ',';
        content += messages_[i].blocks[b];
      }
      content += ']';
      message.String("role", messages_[i].role);
      message.Close();
    }
    out += ']';
  }

 private:
  // One API message: its content blocks' text, tool results first (the API wants them
  // before any text in their user message).
  struct ApiMessage {
    std::string_view role;
    std::vector<std::string> blocks;
    size_t results = 0;  // tool_result blocks at the front of `blocks`
  };

  // The last message when it has `role`, else a new one.
  ApiMessage& Open(std::string_view role) {
    if (messages_.empty() || messages_.back().role != role) messages_.push_back({role, {}, 0});
    return messages_.back();
  }

  void AddUser(const Message& m) {
    std::string text = wire::UserText(m, label_speakers_);
    if (!Blank(text)) Open("user").blocks.push_back(TextBlock(text));
  }

  // An assistant turn with neither text nor calls is skipped: the API has no valid
  // encoding for it (empty content and blank text blocks are both rejected), and
  // dropping it loses nothing the model could read.
  void AddAssistant(const Message& m) {
    if (Blank(m.text) && m.tool_calls.empty()) return;
    ApiMessage& message = Open("assistant");
    if (!Blank(m.text)) message.blocks.push_back(TextBlock(m.text));
    for (const ToolCall& call : m.tool_calls) {
      std::string text;
      JsonObjectText block(text);
      block.String("id", call.id);
      // Bad arguments were never run; the API needs an object here.
      if (call.args_valid && call.args.is_object()) {
        block.Value("input", call.args);
      } else {
        block.Raw("input", "{}");
      }
      block.String("name", call.name);
      block.String("type", "tool_use");
      block.Close();
      message.blocks.push_back(std::move(text));
    }
  }

  void AddToolResult(const Message& m) {
    std::string text;
    JsonObjectText block(text);
    if (!m.text.empty()) block.String("content", m.text);
    if (m.is_error) block.Bool("is_error", true);
    block.String("tool_use_id", m.tool_call_id);
    block.String("type", "tool_result");
    block.Close();
    ApiMessage& message = Open("user");
    message.blocks.insert(message.blocks.begin() + static_cast<std::ptrdiff_t>(message.results), std::move(text));
    ++message.results;
  }

  bool label_speakers_;
  std::vector<ApiMessage> messages_;
};

std::string AgentTools(const std::vector<ToolSpec>& tools) {
  Json out = Json::array();
  for (const ToolSpec& t : tools) {
    out.push_back({{"name", t.name}, {"description", t.description}, {"input_schema", wire::InputSchema(t.input_schema)}});
  }
  return wire::Dump(out);
}

// Appends the request's tools as a JSON array: the agent's (their kept text, `agent`; null
// when it has none), then the one a structured answer is asked through. There is one.
void AppendTools(std::string& out, const std::string* agent, const ModelRequest& request) {
  if (!request.response_schema) {
    out += *agent;
    return;
  }
  if (agent != nullptr) {
    out.append(*agent, 0, agent->size() - 1);  // without its ']'
    out += ',';
  } else {
    out += '[';
  }
  out += wire::Dump(Json{{"name", kRespondTool},
                         {"description", "Return the response as a JSON object matching the schema."},
                         {"input_schema", wire::InputSchema(*request.response_schema)}});
  out += ']';
}

Json ToolChoiceJson(const ModelConfig& config, const ModelRequest& request) {
  Json choice;
  if (request.response_schema) {
    choice = {{"type", "tool"}, {"name", kRespondTool}};
  } else {
    switch (request.tool_choice.mode) {
      case ToolChoice::Mode::kAuto: choice = {{"type", "auto"}}; break;
      case ToolChoice::Mode::kRequired: choice = {{"type", "any"}}; break;
      case ToolChoice::Mode::kNone: return {{"type", "none"}};  // takes no parallel flag
      case ToolChoice::Mode::kNamed: choice = {{"type", "tool"}, {"name", request.tool_choice.name}}; break;
    }
  }
  // options.parallel_tool_calls: false (the OpenAI option) has an Anthropic equivalent.
  if (auto parallel = wire::OptionBool(config, "parallel_tool_calls"); parallel && !*parallel) {
    choice["disable_parallel_tool_use"] = true;
  }
  return choice;
}

std::string BuildRequestBody(const ModelConfig& config, const ModelRequest& request, bool stream,
                             const wire::ToolsText& agent_tools) {
  Conversation conversation(wire::SeveralSpeakers(request.messages));
  for (const Message& m : request.messages) conversation.Add(m);
  const std::string system = SystemText(request.messages);
  const std::shared_ptr<const std::string> agent =
      request.tools != nullptr && !request.tools->empty() ? agent_tools.Of(request.tools) : nullptr;
  const bool has_tools = agent != nullptr || request.response_schema.has_value();
  std::string out;
  out.reserve(wire::BodySizeHint(request) + (agent ? agent->size() : 0));
  JsonObjectText body(out);  // the keys in sorted order
  body.Int("max_tokens", wire::OptionInt(config, "max_tokens").value_or(kDefaultMaxTokens));
  conversation.AppendTo(body.Key("messages"));
  body.String("model", config.model);
  if (stream) body.Bool("stream", true);
  if (!system.empty()) body.String("system", system);
  if (config.temperature) body.Value("temperature", Json(*config.temperature));
  if (has_tools) {
    body.Value("tool_choice", ToolChoiceJson(config, request));
    AppendTools(body.Key("tools"), agent.get(), request);
  }
  body.Close();
  return out;
}

// ---- Response ------------------------------------------------------------------------

// {"type":"error","error":{"type":T,"message":S}} → "T: S"; "" when there is none.
std::string ErrorText(const Json& body) {
  const Json* error = Object(body, "error");
  if (error == nullptr) return "";
  std::string type = String(*error, "type");
  std::string message = String(*error, "message");
  if (type.empty() || message.empty()) return type + message;
  return type + ": " + message;
}

Status ErrorStatus(const Json& body) {
  std::string said = ErrorText(body);
  if (said.empty()) said = "error without a message: " + wire::Snippet(wire::Dump(body));
  return Unavailable(said);
}

void AddBlock(const Json& block, bool structured, ModelResponse& response) {
  std::string type = String(block, "type");
  if (type == "text") {
    response.text += String(block, "text");
    return;
  }
  if (type != "tool_use") return;  // thinking, server tools...: nothing the runtime reads
  const Json* input = Find(block, "input");
  ToolCall call = wire::MakeToolCall(String(block, "id"), String(block, "name"), input ? *input : Json::object());
  if (structured && call.name == kRespondTool) {
    if (call.args_valid) response.json = std::move(call.args);
    return;  // the structured answer, not a call to execute
  }
  response.tool_calls.push_back(std::move(call));
}

Result<ModelResponse> ParseResponse(const Json& body, bool structured) {
  if (!body.is_object()) return InvalidArgument("anthropic response is not a JSON object");
  if (String(body, "type") == "error") return ErrorStatus(body);
  const Json* content = Array(body, "content");
  if (content == nullptr) return InvalidArgument("anthropic response has no content");
  ModelResponse response;
  for (const Json& block : *content) AddBlock(block, structured, response);
  const std::string stop = String(body, "stop_reason");
  if (stop == "max_tokens") response.finish = FinishReason::kLength;
  if (stop == "refusal") response.finish = FinishReason::kRefusal;
  if (stop == "pause_turn") response.finish = FinishReason::kPaused;
  response.provider_finish = stop;
  response.model = String(body, "model");
  if (const Json* usage = Object(body, "usage")) {
    response.usage.input_tokens = Int(*usage, "input_tokens");
    response.usage.output_tokens = Int(*usage, "output_tokens");
  }
  // A model that answered in text instead of calling the respond tool.
  if (structured && !response.json) response.json = wire::JsonObjectIn(response.text);
  return response;
}

// ---- Stream --------------------------------------------------------------------------

class AnthropicAssembler : public StreamAssembler {
 public:
  AnthropicAssembler(bool structured, TextDeltaFn on_text) : structured_(structured), on_text_(std::move(on_text)) {}

  Status OnEvent(const SseEvent& event) override {
    if (done_) return OkStatus();  // nothing after message_stop belongs to this response
    if (wire::Trim(event.data).empty()) return OkStatus();
    Json data = wire::Parse(event.data);
    if (!data.is_object()) return InvalidArgument("malformed stream chunk: " + wire::Snippet(event.data));
    // The payload's own type is authoritative; the SSE event name is only a fallback.
    std::string type = String(data, "type");
    if (type.empty()) type = event.event;
    if (type == "error") return ErrorStatus(data);
    if (type == "message_start") return MessageStart(data);
    if (type == "content_block_start") return BlockStart(data);
    if (type == "content_block_delta") return BlockDelta(data);
    // content_block_stop needs nothing: a block's input is parsed once, in WholeBlock.
    if (type == "message_delta") return MessageDelta(data);
    if (type == "message_stop") done_ = true;
    return OkStatus();  // ping and event types added later
  }

  bool Complete() const override { return done_; }

  Result<ModelResponse> Finish() override {
    if (!done_) return Aborted("stream ended before message_stop");
    return ParseResponse(WholeResponse(), structured_);
  }

 private:
  struct Block {
    Json start = Json::object();  // content_block as started (type, id, name, input {})
    std::string text;
    std::string partial_json;
  };

  Status MessageStart(const Json& data) {
    const Json* message = Object(data, "message");
    if (message != nullptr) model_ = String(*message, "model");
    if (const Json* usage = message != nullptr ? Object(*message, "usage") : nullptr) TakeUsage(*usage);
    return OkStatus();
  }

  Status BlockStart(const Json& data) {
    Block& block = blocks_[Int(data, "index")];
    if (const Json* start = Object(data, "content_block")) block.start = *start;
    // A text block starts with "" in practice; pass on whatever it carries.
    if (String(block.start, "type") == "text") AppendText(block, String(block.start, "text"));
    return OkStatus();
  }

  Status BlockDelta(const Json& data) {
    const Json* delta = Object(data, "delta");
    if (delta == nullptr) return OkStatus();
    Block& block = blocks_[Int(data, "index")];
    std::string type = String(*delta, "type");
    if (type == "text_delta") {
      if (!block.start.contains("type")) block.start["type"] = "text";  // delta without a start
      AppendText(block, String(*delta, "text"));
    } else if (type == "input_json_delta") {
      block.partial_json += String(*delta, "partial_json");
    }  // thinking, signature and citation deltas are not part of the reply
    return OkStatus();
  }

  // Usage counts are cumulative: the latest value wins.
  Status MessageDelta(const Json& data) {
    if (const Json* usage = Object(data, "usage")) TakeUsage(*usage);
    if (const Json* delta = Object(data, "delta"); delta != nullptr && !String(*delta, "stop_reason").empty()) {
      stop_reason_ = String(*delta, "stop_reason");
    }
    return OkStatus();
  }

  void TakeUsage(const Json& usage) {
    for (const char* key : {"input_tokens", "output_tokens"}) {
      if (const Json* n = Find(usage, key); n != nullptr && n->is_number_integer()) usage_[key] = *n;
    }
  }

  void AppendText(Block& block, const std::string& text) {
    if (text.empty()) return;
    block.text += text;
    if (on_text_) on_text_(text);
  }

  // The block as a non-streamed response would carry it. A tool_use input is the
  // concatenated partial_json ("" means the {} it started with); text that is not a
  // JSON object stays a string, which the parser reports as invalid arguments.
  static Json WholeBlock(const Block& block) {
    Json out = block.start;
    std::string type = String(out, "type");
    if (type == "text") out["text"] = block.text;
    if (type != "tool_use" || wire::Trim(block.partial_json).empty()) return out;
    Json input = wire::Parse(block.partial_json);
    out["input"] = input.is_object() ? std::move(input) : Json(block.partial_json);
    return out;
  }

  Json WholeResponse() const {
    Json content = Json::array();
    for (const auto& [index, block] : blocks_) content.push_back(WholeBlock(block));  // std::map: index order
    Json whole = {{"type", "message"}, {"role", "assistant"}, {"content", std::move(content)}, {"usage", usage_}};
    if (!stop_reason_.empty()) whole["stop_reason"] = stop_reason_;
    if (!model_.empty()) whole["model"] = model_;
    return whole;
  }

  bool structured_;
  TextDeltaFn on_text_;
  bool done_ = false;
  std::map<int, Block> blocks_;
  Json usage_ = Json::object();
  std::string stop_reason_;
  std::string model_;
};

// ---- Format --------------------------------------------------------------------------

class AnthropicWire : public WireFormat {
 public:
  std::string_view Provider() const override { return "anthropic"; }
  std::string DefaultBaseUrl() const override { return "https://api.anthropic.com"; }
  std::string Path() const override { return "/v1/messages"; }

  std::vector<HttpHeader> Headers(const ModelConfig& config) const override {
    std::vector<HttpHeader> headers;
    if (!config.api_key.empty()) headers.push_back({"x-api-key", config.api_key});
    headers.push_back({"anthropic-version", "2023-06-01"});
    return headers;
  }

  std::string BuildBody(const ModelConfig& config, const ModelRequest& request, bool stream) const override {
    return BuildRequestBody(config, request, stream, agent_tools_);
  }

  Result<ModelResponse> ParseBody(std::string_view body, const ModelRequest& request) const override {
    Json parsed = wire::Parse(body);
    if (parsed.is_discarded()) return InvalidArgument("anthropic response is not JSON: " + wire::Snippet(body));
    return ParseResponse(parsed, request.response_schema.has_value());
  }

  std::unique_ptr<StreamAssembler> NewAssembler(const ModelRequest& request, TextDeltaFn on_text) const override {
    return std::make_unique<AnthropicAssembler>(request.response_schema.has_value(), std::move(on_text));
  }

  std::string ErrorMessage(std::string_view body) const override { return ErrorText(wire::Parse(body)); }

 private:
  wire::ToolsText agent_tools_{&AgentTools};
};

}  // namespace

std::unique_ptr<WireFormat> MakeAnthropicWire() { return std::make_unique<AnthropicWire>(); }

}  // namespace reins
