// Helpers shared by the OpenAI and Anthropic wire formats: reading provider JSON without
// ever throwing (providers add fields, change types, and send garbage on bad days), and
// the few mappings both formats make the same way.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reins/agent_config.h"
#include "reins/message.h"
#include "reins/model_provider.h"

namespace reins::wire {

// The JSON value of `text`; a discarded value (is_discarded()) when it is not JSON.
Json Parse(std::string_view text);

// `text` without leading and trailing ASCII whitespace.
std::string_view Trim(std::string_view text);

// Compact JSON text; invalid UTF-8 in strings (user input can carry it) is replaced
// instead of throwing.
std::string Dump(const Json& value);

// `obj[key]` when `obj` is an object that has it, else nullptr.
const Json* Find(const Json& obj, const char* key);
// The string / integer / object at `obj[key]`; ""/0/nullptr when absent or another type.
std::string String(const Json& obj, const char* key);
int Int(const Json& obj, const char* key);
const Json* Object(const Json& obj, const char* key);
const Json* Array(const Json& obj, const char* key);

// config.options[key] when it has the right type.
std::optional<int> OptionInt(const ModelConfig& config, const char* key);
std::optional<bool> OptionBool(const ModelConfig& config, const char* key);

// A user message as the model sees it: "[speaker]: text" when `label_speakers`.
std::string UserText(const Message& m, bool label_speakers);
// Whether more than one person speaks in `messages`: only then are speakers named.
bool SeveralSpeakers(const std::vector<Message>& messages);

// About the size of a request body for `request`'s messages, without the tools: what
// a body reserves (a body waits with its request as long as the model takes, so a
// fixed kilobyte for a 700-byte body was memory held for nothing).
size_t BodySizeHint(const ModelRequest& request);

// A tool's input schema; an empty object schema when the spec has none (both APIs
// require one).
Json InputSchema(const Json& schema);

// The JSON text of an agent's tools as one wire format writes them, kept for the tools
// vector it was written from. An agent's tools are one vector shared by every request it
// makes (ModelRequest::tools), and every request carries every schema: written anew each
// time, 200 tools cost 112 µs per request on OpenAI's wire and 605 µs on Anthropic's
// (docs/PERFORMANCE.md, round 9). One entry: a request with another vector (an audit's
// gather round) has its tools written, and they replace the kept ones.
class ToolsText {
 public:
  using Writer = std::string (*)(const std::vector<ToolSpec>& tools);
  explicit ToolsText(Writer write) : write_(write) {}

  // The text `write` gives for `tools`, written once per vector. Thread-safe: requests
  // are built on every I/O thread.
  std::shared_ptr<const std::string> Of(const std::shared_ptr<const std::vector<ToolSpec>>& tools) const;

 private:
  Writer write_;
  mutable std::mutex mu_;
  mutable std::weak_ptr<const std::vector<ToolSpec>> of_;  // weak: a vector gone is not reused by address
  mutable std::shared_ptr<const std::string> text_;
};

// A tool call from what the provider sent as its arguments: a JSON string (OpenAI),
// an object (Anthropic), or anything else. Bad arguments give args_valid = false and
// never fail the response. An empty string is an empty object.
ToolCall MakeToolCall(std::string id, std::string name, const Json& arguments);

// The JSON object a structured-output answer holds: the whole text, or the body of a
// ```json fence around it (OpenAI-compatible servers that ignore response_format).
std::optional<Json> JsonObjectIn(std::string_view text);

// A printable prefix of untrusted bytes for an error message: ASCII only, so the
// message stays valid UTF-8 wherever it is logged or written as JSON.
std::string Snippet(std::string_view bytes);

}  // namespace reins::wire
