// The provider-neutral conversation history: what the runtime keeps and what the
// provider adapters serialise to a wire format (OpenAI Chat Completions, Anthropic
// Messages). Invariant I10: every tool call in an assistant message is followed by
// exactly one tool message answering it, in the order of the calls.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "reins/json.h"

namespace reins {

enum class Role { kSystem, kUser, kAssistant, kTool };
std::string_view RoleName(Role role);
bool ParseRole(std::string_view name, Role* role);

// One call the model proposed. `arguments_text` is what the model sent; `args` is
// its parsed form, valid only when `args_valid` (the model may send garbage).
struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments_text;
  Json args = Json::object();
  bool args_valid = true;
  // The response was cut off by the token limit inside this call: whatever its
  // arguments parse to, it is not a call the model finished (refused, never run).
  bool cut_off = false;
};

struct Message {
  Role role = Role::kUser;
  bool is_error = false;             // tool messages only: the result is a failure
  std::string text;
  std::vector<ToolCall> tool_calls;  // assistant messages only
  std::string tool_call_id;          // tool messages only
  std::string tool_name;             // tool messages only
  std::string speaker;               // user messages: who spoke (multi-speaker sessions)

  static Message System(std::string text);
  static Message User(std::string text, std::string speaker = "");
  static Message Assistant(std::string text, std::vector<ToolCall> calls = {});
  static Message Tool(std::string call_id, std::string tool_name, std::string content, bool is_error);
};

Json MessageToJson(const Message& m);
bool MessageFromJson(const Json& j, Message* m);

// How the model may use tools on one call.
struct ToolChoice {
  enum class Mode { kAuto, kRequired, kNone, kNamed };
  Mode mode = Mode::kAuto;
  std::string name;  // kNamed only

  static ToolChoice Auto() { return {}; }
  static ToolChoice None() { return {Mode::kNone, ""}; }
  static ToolChoice Required() { return {Mode::kRequired, ""}; }
  static ToolChoice Named(std::string n) { return {Mode::kNamed, std::move(n)}; }
  std::string ToString() const;  // "auto", "none", "required", "tool:NAME"
};

}  // namespace reins
