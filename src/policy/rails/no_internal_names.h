// NoInternalNames rail: a reply that mentions an internal tool name
// ("submit_prayer_request") gets the tool's human title ("prayer request") instead.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "turn/policy.h"

namespace reins {

class NoInternalNames final : public Policy {
 public:
  explicit NoInternalNames(const AgentConfig& config);
  std::string_view Name() const override { return "no_internal_names"; }
  Rail rail() const override { return Rail::kBySentence; }
  bool ReviewReply(TurnContext& ctx, std::string& reply) const override;
  // A name is a word: a sentence holds it whole.
  bool ReviewSentence(TurnContext& ctx, const std::string&, std::string& sentence) const override {
    return ReviewReply(ctx, sentence);
  }

 private:
  std::vector<std::pair<std::string, std::string>> names_;  // internal name -> title, longest first
};

}  // namespace reins
