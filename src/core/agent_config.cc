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

}  // namespace reins
