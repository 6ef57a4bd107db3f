#include "reins/agent_config.h"

namespace reins {

const ToolDef* AgentConfig::FindTool(std::string_view tool_name) const {
  for (const ToolDef& t : tools) {
    if (t.name == tool_name) return &t;
  }
  return nullptr;
}

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

}  // namespace reins
