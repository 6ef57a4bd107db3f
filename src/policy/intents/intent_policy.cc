#include "policy/intents/intent_policy.h"

#include <algorithm>

namespace reins {

std::vector<std::string> MissingTools(const std::vector<std::string>& ran, const std::vector<std::string>& required) {
  std::vector<std::string> missing;
  for (const std::string& tool : required) {
    if (std::find(ran.begin(), ran.end(), tool) == ran.end()) missing.push_back(tool);
  }
  return missing;
}

IntentPolicy::IntentPolicy(const AgentConfig& config) {
  for (const IntentConfig& intent : config.intents) {
    auto re = std::make_unique<RE2>(intent.match, RE2::Quiet);
    if (re->ok()) intents_.push_back({&intent, std::move(re)});
  }
}

std::optional<std::string> IntentPolicy::RequiredToolMissing(TurnContext& ctx) const {
  for (const Intent& intent : intents_) {
    if (!RE2::PartialMatch(ctx.user_text(), *intent.match)) continue;
    // The request's tools count wherever they ran: in this turn, or in the one that
    // asked the clarification (or approval) this turn answers.
    std::vector<std::string> missing = MissingTools(ctx.RequestTools(), intent.config->required_tools);
    if (missing.empty()) continue;
    // One forced retry per intent and turn, naming a tool the model is offered: never a
    // withheld one (an MCP tool its lock no longer matches), which a provider would
    // refuse as a tool choice outside the request's tools.
    bool first_time = ctx.Slot<IntentTurn>().retried.insert(intent.config->name).second;
    auto offered = std::find_if(missing.begin(), missing.end(), [&ctx](const std::string& name) {
      const ToolDef* tool = ctx.config.FindTool(name);
      return tool == nullptr || tool->withheld.empty();
    });
    const bool force = first_time && intent.config->enforcement == IntentEnforcement::kForce && offered != missing.end();
    ctx.Emit("intent.missing", {{"intent", intent.config->name},
                                {"missing", missing},
                                {"enforcement", kIntentEnforcements.Name(intent.config->enforcement)},
                                {"retry", force}});
    if (force) return *offered;
  }
  return std::nullopt;
}

}  // namespace reins
