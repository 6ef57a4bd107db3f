// HonestClaims rail (I5): a reply that claims an action ("submitted", "sent",
// "booked"...) for a tool that did not succeed in this turn gets a correction
// appended. "Did not succeed": never called, refused, skipped, or failed. A deferred
// call still waiting in the outbox is pending, not failed: the failure note covers it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <re2/re2.h>

#include "turn/policy.h"

namespace reins {

class HonestClaims final : public Policy {
 public:
  HonestClaims(const AgentConfig& config, const Json& rail_config);
  std::string_view Name() const override { return "honest_claims"; }
  bool ReviewReply(TurnContext& ctx, std::string& reply) const override;

 private:
  const AgentConfig& config_;
  std::vector<std::unique_ptr<RE2>> claims_;
  std::string correction_;  // "{title}" is replaced by the tool's title
};

}  // namespace reins
