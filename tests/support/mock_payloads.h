// Provider payloads for MockUpstream scripts, in both wire formats (OpenAI Chat
// Completions and Anthropic Messages, as described in docs/providers.md):
// whole responses, SSE streams split into small fragments, and error bodies.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace reins::testing {

struct MockCall {
  std::string id, name, arguments_text;  // arguments_text: raw JSON text (may be deliberately invalid)
};

struct MockTurn {
  std::string text;
  std::vector<MockCall> calls;
  int input_tokens = 10;
  int output_tokens = 5;
};

// Whole chat.completion JSON; finish_reason "tool_calls" when there are calls, else "stop";
// content is null when text is empty.
std::string OpenAIResponse(const MockTurn& t);

// SSE events ("data: {...}\n\n"): a role chunk, the text and each call's arguments split
// into pieces of about `fragment` bytes (never inside a UTF-8 sequence; 0 = unsplit), the
// first fragment of a call carrying id+name+"arguments":"", a finish chunk, a usage chunk
// with "choices":[], then "data: [DONE]\n\n".
std::vector<std::string> OpenAIStream(const MockTurn& t, size_t fragment = 4);

// Whole message JSON; a tool_use's input is arguments_text parsed, or {} when it is not
// valid JSON. stop_reason "tool_use" when there are calls, else "end_turn".
std::string AnthropicResponse(const MockTurn& t);

// "event: X\ndata: {...}\n\n" events: message_start, a ping, then per block (a text block
// when there is text or no call, then one tool_use block per call) content_block_start,
// content_block_delta (text_delta / input_json_delta carrying the raw arguments_text in
// pieces), content_block_stop; then message_delta (stop_reason, usage.output_tokens) and
// message_stop.
std::vector<std::string> AnthropicStream(const MockTurn& t, size_t fragment = 4);

// {"error":{"message","type","param":null,"code"}}; an empty code is written as null.
std::string OpenAIError(const std::string& message, const std::string& type, const std::string& code);

// {"type":"error","error":{"type","message"},"request_id":"req_mock"}
std::string AnthropicError(const std::string& type, const std::string& message);

}  // namespace reins::testing
