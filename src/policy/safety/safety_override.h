// SafetyOverride (seed 000): a message matching a crisis pattern is answered with the
// configured message before any model call, and the flag tool runs deferred with the
// user's text. The model is bypassed entirely, so the person gets the safety message
// whatever the model would have said.
#pragma once

#include <memory>
#include <vector>

#include <re2/re2.h>

#include "policy/policy.h"

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

// The arguments a flag tool gets: the user's text under the tool's first string
// property named text, message, user_text or content, else its first required string
// property, else "text".
Json FlagToolArgs(const ToolDef& tool, const std::string& user_text);

}  // namespace reins
