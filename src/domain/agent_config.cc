#include "reins/agent_config.h"

namespace reins {

const ToolDef* AgentConfig::FindTool(std::string_view tool_name) const {
  for (const ToolDef& t : tools) {
    if (t.name == tool_name) return &t;
  }
  return nullptr;
}

bool ToolDef::Writes() const { return !annotations.value("readOnlyHint", false); }

std::string DefaultFailureNote(const std::string& title) {
  return "(Note: I could not complete \"" + title + "\" just now. Please try again or contact us directly.)";
}

bool IsValidToolName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string DefaultToolTitle(const std::string& name) {
  std::string title = name;
  for (char& c : title) c = c == '_' ? ' ' : c;
  return title;
}

Json FlagToolArgs(const ToolDef& tool, const std::string& user_text) {
  const Json& props = tool.input_schema.value("properties", Json::object());
  auto is_string = [&](const std::string& name) {
    return props.contains(name) && props[name].is_object() && props[name].value("type", "") == "string";
  };
  for (const char* name : {"text", "message", "user_text", "content"}) {
    if (is_string(name)) return Json{{name, user_text}};
  }
  for (const Json& name : tool.input_schema.value("required", Json::array())) {
    if (name.is_string() && is_string(name.get<std::string>())) return Json{{name.get<std::string>(), user_text}};
  }
  return Json{{"text", user_text}};
}

}  // namespace reins
