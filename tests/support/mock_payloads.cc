#include "support/mock_payloads.h"

#include <algorithm>
#include <utility>

#include <nlohmann/json.hpp>

namespace reins::testing {
namespace {

using nlohmann::json;

constexpr const char* kModel = "mock-model";

// Splits `s` into pieces of at least `fragment` bytes, each ending on a UTF-8 character
// boundary, so every piece can be carried in a JSON string on its own.
std::vector<std::string> Split(const std::string& s, size_t fragment) {
  std::vector<std::string> out;
  if (fragment == 0) {
    if (!s.empty()) out.push_back(s);
    return out;
  }
  size_t pos = 0;
  while (pos < s.size()) {
    size_t end = std::min(pos + fragment, s.size());
    while (end < s.size() && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) ++end;
    out.push_back(s.substr(pos, end - pos));
    pos = end;
  }
  return out;
}

json Usage(const MockTurn& t) {
  return {{"prompt_tokens", t.input_tokens},
          {"completion_tokens", t.output_tokens},
          {"total_tokens", t.input_tokens + t.output_tokens}};
}

json ParsedOrEmpty(const std::string& text) {
  json v = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return v.is_discarded() ? json::object() : v;
}

std::string Data(const json& chunk) { return "data: " + chunk.dump() + "\n\n"; }

std::string Event(const std::string& name, const json& data) {
  return "event: " + name + "\ndata: " + data.dump() + "\n\n";
}

json OpenAIChunk(json delta, json finish_reason) {
  json choice = {{"index", 0}, {"delta", std::move(delta)}, {"logprobs", nullptr}, {"finish_reason", std::move(finish_reason)}};
  return {{"id", "chatcmpl-mock"}, {"object", "chat.completion.chunk"}, {"created", 1},
          {"model", kModel},       {"choices", json::array({choice})},  {"usage", nullptr}};
}

json OpenAIToolDelta(size_t index, json fields) {
  json call = std::move(fields);
  call["index"] = index;
  return {{"tool_calls", json::array({call})}};
}

void AddOpenAICall(std::vector<std::string>& out, size_t index, const MockCall& c, size_t fragment) {
  json first = {{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", ""}}}};
  out.push_back(Data(OpenAIChunk(OpenAIToolDelta(index, first), nullptr)));
  for (const auto& piece : Split(c.arguments_text, fragment)) {
    json more = {{"function", {{"arguments", piece}}}};
    out.push_back(Data(OpenAIChunk(OpenAIToolDelta(index, more), nullptr)));
  }
}

void AddAnthropicBlock(std::vector<std::string>& out, size_t index, json start, const std::string& delta_type,
                       const std::string& delta_key, const std::vector<std::string>& pieces) {
  out.push_back(Event("content_block_start",
                      {{"type", "content_block_start"}, {"index", index}, {"content_block", std::move(start)}}));
  for (const auto& piece : pieces) {
    json delta = {{"type", delta_type}, {delta_key, piece}};
    out.push_back(Event("content_block_delta", {{"type", "content_block_delta"}, {"index", index}, {"delta", delta}}));
  }
  out.push_back(Event("content_block_stop", {{"type", "content_block_stop"}, {"index", index}}));
}

const char* AnthropicStopReason(const MockTurn& t) { return t.calls.empty() ? "end_turn" : "tool_use"; }

}  // namespace

std::string OpenAIResponse(const MockTurn& t) {
  json message = {{"role", "assistant"}, {"refusal", nullptr}};
  message["content"] = t.text.empty() ? json(nullptr) : json(t.text);
  if (!t.calls.empty()) {
    json calls = json::array();
    for (const auto& c : t.calls) {
      calls.push_back({{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", c.arguments_text}}}});
    }
    message["tool_calls"] = std::move(calls);
  }
  json choice = {{"index", 0},
                 {"finish_reason", t.calls.empty() ? "stop" : "tool_calls"},
                 {"logprobs", nullptr},
                 {"message", std::move(message)}};
  json whole = {{"id", "chatcmpl-mock"}, {"object", "chat.completion"}, {"created", 1},
                {"model", kModel},       {"choices", json::array({choice})}, {"usage", Usage(t)}};
  return whole.dump();
}

std::vector<std::string> OpenAIStream(const MockTurn& t, size_t fragment) {
  std::vector<std::string> out;
  out.push_back(Data(OpenAIChunk({{"role", "assistant"}, {"content", ""}}, nullptr)));
  for (const auto& piece : Split(t.text, fragment)) out.push_back(Data(OpenAIChunk({{"content", piece}}, nullptr)));
  for (size_t i = 0; i < t.calls.size(); ++i) AddOpenAICall(out, i, t.calls[i], fragment);
  out.push_back(Data(OpenAIChunk(json::object(), t.calls.empty() ? "stop" : "tool_calls")));
  json usage = OpenAIChunk(json::object(), nullptr);
  usage["choices"] = json::array();
  usage["usage"] = Usage(t);
  out.push_back(Data(usage));
  out.push_back("data: [DONE]\n\n");
  return out;
}

std::string AnthropicResponse(const MockTurn& t) {
  json content = json::array();
  if (!t.text.empty()) content.push_back({{"type", "text"}, {"text", t.text}});
  for (const auto& c : t.calls) {
    content.push_back({{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", ParsedOrEmpty(c.arguments_text)}});
  }
  json whole = {{"id", "msg_mock"},
                {"type", "message"},
                {"role", "assistant"},
                {"model", kModel},
                {"content", std::move(content)},
                {"stop_reason", AnthropicStopReason(t)},
                {"stop_sequence", nullptr},
                {"usage", {{"input_tokens", t.input_tokens}, {"output_tokens", t.output_tokens}}}};
  return whole.dump();
}

std::vector<std::string> AnthropicStream(const MockTurn& t, size_t fragment) {
  std::vector<std::string> out;
  json message = {{"id", "msg_mock"},
                  {"type", "message"},
                  {"role", "assistant"},
                  {"model", kModel},
                  {"content", json::array()},
                  {"stop_reason", nullptr},
                  {"stop_sequence", nullptr},
                  {"usage", {{"input_tokens", t.input_tokens}, {"output_tokens", 1}}}};
  out.push_back(Event("message_start", {{"type", "message_start"}, {"message", std::move(message)}}));
  out.push_back(Event("ping", {{"type", "ping"}}));
  size_t index = 0;
  if (!t.text.empty() || t.calls.empty()) {
    AddAnthropicBlock(out, index++, {{"type", "text"}, {"text", ""}}, "text_delta", "text", Split(t.text, fragment));
  }
  for (const auto& c : t.calls) {
    json start = {{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", json::object()}};
    AddAnthropicBlock(out, index++, std::move(start), "input_json_delta", "partial_json",
                      Split(c.arguments_text, fragment));
  }
  json delta = {{"stop_reason", AnthropicStopReason(t)}, {"stop_sequence", nullptr}};
  out.push_back(Event("message_delta", {{"type", "message_delta"},
                                        {"delta", std::move(delta)},
                                        {"usage", {{"output_tokens", t.output_tokens}}}}));
  out.push_back(Event("message_stop", {{"type", "message_stop"}}));
  return out;
}

std::string OpenAIError(const std::string& message, const std::string& type, const std::string& code) {
  json error = {{"message", message}, {"type", type}, {"param", nullptr}};
  error["code"] = code.empty() ? json(nullptr) : json(code);
  return json{{"error", std::move(error)}}.dump();
}

std::string AnthropicError(const std::string& type, const std::string& message) {
  json body = {{"type", "error"}, {"error", {{"type", type}, {"message", message}}}, {"request_id", "req_mock"}};
  return body.dump();
}

}  // namespace reins::testing
