// Helpers shared by the wire-format tests (openai_wire_test, anthropic_wire_test).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "model/wire_format.h"
#include "net/sse.h"

namespace reins::wire_test {

inline std::shared_ptr<const std::vector<ToolSpec>> WeatherTools() {
  return std::make_shared<const std::vector<ToolSpec>>(std::vector<ToolSpec>{
      {"get_weather", "Current weather", Json::parse(R"({"type":"object","properties":{"city":{"type":"string"}}})")},
      {"get_time", "Local time", Json()},  // no schema: an empty object schema is sent
  });
}

inline ModelRequest Request(std::vector<Message> messages, std::shared_ptr<const std::vector<ToolSpec>> tools = nullptr,
                            ToolChoice choice = ToolChoice::Auto()) {
  ModelRequest r;
  r.messages = std::move(messages);
  r.tools = std::move(tools);
  r.tool_choice = std::move(choice);
  return r;
}

inline ToolCall Call(std::string id, std::string name, std::string arguments_text, Json args = Json::object(),
                     bool valid = true) {
  return ToolCall{std::move(id), std::move(name), std::move(arguments_text), std::move(args), valid};
}

inline void ExpectSameResponse(const ModelResponse& a, const ModelResponse& b) {
  EXPECT_EQ(a.text, b.text);
  EXPECT_EQ(a.json, b.json);
  EXPECT_EQ(a.usage.input_tokens, b.usage.input_tokens);
  EXPECT_EQ(a.usage.output_tokens, b.usage.output_tokens);
  ASSERT_EQ(a.tool_calls.size(), b.tool_calls.size());
  for (size_t i = 0; i < a.tool_calls.size(); ++i) {
    EXPECT_EQ(a.tool_calls[i].id, b.tool_calls[i].id);
    EXPECT_EQ(a.tool_calls[i].name, b.tool_calls[i].name);
    EXPECT_EQ(a.tool_calls[i].arguments_text, b.tool_calls[i].arguments_text);
    EXPECT_EQ(a.tool_calls[i].args, b.tool_calls[i].args);
    EXPECT_EQ(a.tool_calls[i].args_valid, b.tool_calls[i].args_valid);
  }
}

struct Streamed {
  Status status;      // the first failed OnEvent
  std::string text;   // what on_text received, concatenated
  int text_calls = 0;
  bool complete = false;
  Result<ModelResponse> response = Status(StatusCode::kInternal, "not finished");
};

// Feeds `sse` through SseParser in pieces of `piece` bytes, stopping at the first error.
inline Streamed Stream(const WireFormat& wire, const ModelRequest& request, std::string_view sse, size_t piece) {
  Streamed out;
  auto assembler = wire.NewAssembler(request, [&](std::string_view text) {
    EXPECT_FALSE(text.empty());
    out.text += text;
    ++out.text_calls;
  });
  SseParser parser;
  for (size_t at = 0; at < sse.size() && out.status.ok(); at += piece) {
    parser.Feed(sse.substr(at, piece), [&](SseEvent&& event) {
      if (out.status.ok()) out.status = assembler->OnEvent(event);
    });
  }
  out.complete = assembler->Complete();
  out.response = assembler->Finish();
  return out;
}

}  // namespace reins::wire_test
