// The parts of an OpenAI Chat Completions answer that reins keeps, and the reader that
// takes them from the usual answer in one pass over its text, building no JSON value of
// it: the DOM of a small answer (the response, its choice, message, tool calls, usage)
// came to some forty allocations, the largest single source of them in a turn
// (docs/PERFORMANCE.md, round 8).
//
// The reader takes only what it can read exactly as openai_wire.cc's ParseResponse reads
// the DOM: an answer with an error, content in parts, a value of another type than the
// usual one where reins reads it, a key twice in an object reins reads, or text that is
// not JSON, is refused, and the caller parses it as a DOM (which also explains what is
// wrong). tests/model/openai_wire_test.cc holds the two paths side by side.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "reins/model_provider.h"

namespace reins::openai {

struct Answer {
  std::string content;        // choices[0].message.content ("" for null)
  std::string refusal;        // choices[0].message.refusal
  std::vector<ToolCall> tool_calls;
  std::string finish_reason;  // choices[0].finish_reason
  std::string model;          // the model that answered
  int input_tokens = 0;       // usage.prompt_tokens
  int output_tokens = 0;      // usage.completion_tokens
};

// The answer as a ModelResponse: a refusal with no content is the text, "length" cuts
// the answer short, a filtered answer with nothing in it is a refusal; `structured`
// reads the JSON object in the text.
ModelResponse Respond(Answer answer, bool structured);

// The usual answer's parts, or false (the text must be read as a DOM, see above).
bool ReadUsualAnswer(std::string_view body, Answer& answer);

}  // namespace reins::openai
