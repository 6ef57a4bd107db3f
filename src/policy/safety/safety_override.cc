#include "policy/safety/safety_override.h"

namespace reins {

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

SafetyOverride::SafetyOverride(const AgentConfig& config) : config_(config) {
  for (const SafetyOverrideConfig& rule : config.rails.safety_override) {
    auto re = std::make_unique<RE2>(rule.match, RE2::Quiet);
    if (re->ok()) rules_.push_back({std::move(re), &rule});
  }
}

std::optional<std::string> SafetyOverride::Preempt(TurnContext& ctx) const {
  if (!ctx.input.say) return std::nullopt;  // only what the person says can be a crisis message
  for (const Rule& rule : rules_) {
    if (!RE2::PartialMatch(*ctx.input.say, *rule.match)) continue;
    ctx.Emit("safety.override", {{"pattern", rule.config->match}, {"flag_tool", rule.config->flag_tool}});
    if (const ToolDef* flag = config_.FindTool(rule.config->flag_tool)) {
      ToolOutcome o;
      o.call_id = "safety_" + std::to_string(ctx.result.tools.size());
      o.name = flag->name;
      o.args = FlagToolArgs(*flag, *ctx.input.say);
      o.status = ToolOutcome::Status::kDeferred;
      o.idempotency_key = ctx.turn_id + ":0:" + std::to_string(ctx.result.tools.size());
      ctx.Emit("tool.deferred", {{"call_id", o.call_id}, {"name", o.name}, {"args", o.args}, {"response", 0},
                                 {"position", static_cast<int>(ctx.result.tools.size())},
                                 {"idempotency_key", o.idempotency_key}, {"policy", "safety_override"}});
      ctx.result.tools.push_back(std::move(o));
    }
    return rule.config->message;
  }
  return std::nullopt;
}

}  // namespace reins
