#include "policy/guards/call_shape_guard.h"

namespace reins {

CallVerdict CallShapeGuard::Guard(TurnContext& ctx, const ProposedCall& proposed) const {
  const ToolCall& call = *proposed.call;
  if (proposed.tool == nullptr || !proposed.tool->withheld.empty()) {
    std::string names;
    for (const ToolDef& t : ctx.config.tools) {
      if (t.withheld.empty()) names += (names.empty() ? "" : ", ") + t.name;
    }
    // A withheld tool (an MCP tool that no longer matches the agent's lock) is, to the
    // model, a tool it was not given; the trace keeps the difference.
    return CallVerdict::Reject(proposed.tool == nullptr ? "unknown_tool" : "withheld",
                               "there is no tool named '" + call.name + "'. Use only the tools you were given: " +
                                   names + ".");
  }
  if (const std::set<std::string>& allowed = ctx.extras().allowed_tools; !allowed.empty() && !allowed.count(call.name)) {
    std::string names;
    for (const std::string& t : allowed) names += (names.empty() ? "" : ", ") + t;
    return CallVerdict::Reject("not_allowed", call.name + " is not part of this round; only " + names + " may be called.");
  }
  if (call.cut_off) {
    return CallVerdict::Reject("cut_off", "your response was cut off by the token limit inside this call to " +
                                              call.name + ", so it did not run. Call it again, with shorter arguments.");
  }
  if (!call.args_valid) {
    std::string excerpt = call.arguments_text.substr(0, 80);
    return CallVerdict::Reject("invalid_json", "the arguments of " + call.name +
                                                   " are not valid JSON (got: " + excerpt +
                                                   "). Send the arguments as one JSON object.");
  }
  if (!call.args.is_object()) {
    return CallVerdict::Reject("invalid_json",
                               "the arguments of " + call.name + " must be a JSON object, got " + call.args.dump());
  }
  return CallVerdict::Continue();
}

}  // namespace reins
