// SafetyOverride (seed 000): a message matching a crisis pattern is answered with the
// configured message before anything else (the admission gate and pending questions
// included, I6), and the flag tool is proposed with the user's text, to run deferred
// (ctx.extend().system_calls; the pipeline guards and queues it). The model is bypassed
// entirely, so the person gets the safety message whatever the model would have said.
#pragma once

#include <memory>
#include <vector>

#include <re2/re2.h>

#include "turn/policy.h"

namespace reins {

class SafetyOverride final : public Policy {
 public:
  explicit SafetyOverride(const AgentConfig& config);
  std::string_view Name() const override { return "safety_override"; }
  std::optional<std::string> Preempt(TurnContext& ctx) const override;

 private:
  struct Rule {
    std::unique_ptr<RE2> match;
    const SafetyOverrideConfig* config;
  };
  const AgentConfig& config_;
  std::vector<Rule> rules_;
};

}  // namespace reins
