#include "policy/schema_guard/schema_guard.h"

namespace reins {

SchemaGuard::SchemaGuard(const AgentConfig& config) {
  for (const ToolDef& tool : config.tools) {
    // The config loader already refused schemas that do not compile.
    if (auto compiled = SchemaValidator::Compile(tool.input_schema); compiled.ok()) {
      validators_.emplace(tool.name, std::move(compiled).value());
    }
  }
}

CallVerdict SchemaGuard::Guard(TurnContext&, const ProposedCall& proposed) const {
  auto it = validators_.find(proposed.tool->name);
  if (it == validators_.end()) return CallVerdict::Continue();
  std::vector<std::string> problems = it->second.Validate(proposed.call->args);
  if (problems.empty()) return CallVerdict::Continue();
  std::string message = "the arguments of " + proposed.tool->name + " do not match its input schema:";
  for (const std::string& p : problems) message += " " + p + ";";
  message += " fix the arguments and call again.";
  return CallVerdict::Reject("schema", message);
}

}  // namespace reins
