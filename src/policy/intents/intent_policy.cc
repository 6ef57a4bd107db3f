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
    // One forced retry per intent and turn.
    bool first_time = ctx.Slot<IntentTurn>().retried.insert(intent.config->name).second;
    ctx.Emit("intent.missing", {{"intent", intent.config->name},
                                {"missing", missing},
                                {"enforcement", kIntentEnforcements.Name(intent.config->enforcement)},
                                {"retry", first_time && intent.config->enforcement == IntentEnforcement::kForce}});
    if (first_time && intent.config->enforcement == IntentEnforcement::kForce) return missing.front();
  }
  return std::nullopt;
}

}  // namespace reins
