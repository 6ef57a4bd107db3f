#include "policy/safety/safety_override.h"

namespace reins {

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
      // Proposed by the runtime, not the model: the pipeline guards it like any call
      // (schema, deferral) and it goes through the outbox.
      Json args = FlagToolArgs(*flag, *ctx.input.say);
      std::vector<ToolCall>& calls = ctx.extend().system_calls;
      calls.push_back({"safety_" + std::to_string(calls.size()), flag->name, args.dump(), args, true});
    }
    return rule.config->message;
  }
  return std::nullopt;
}

}  // namespace reins
