// NoUntrustedLinks (`rails.no_untrusted_links`): a link or host name in a reply that
// only outside data holds (a result of an untrusted tool, in this turn or an earlier
// one) and no trusted source does is taken out of the reply, and the reply says so
// once. It closes two channels a planted instruction uses without any write: a link
// that carries the person's data away in its address, and a phishing link the model
// repeats as if it were its own advice.
#pragma once

#include <string>

#include "policy/untrusted/outside_values.h"
#include "turn/policy.h"

namespace reins {

class NoUntrustedLinks final : public Policy {
 public:
  NoUntrustedLinks(const AgentConfig& config, const Json& rail_config);
  std::string_view Name() const override { return "no_untrusted_links"; }
  Rail rail() const override { return Rail::kBySentence; }
  bool ReviewReply(TurnContext& ctx, std::string& reply) const override;
  bool ReviewSentence(TurnContext& ctx, const std::string& sent, std::string& sentence) const override;
  bool CloseReply(TurnContext& ctx, const std::string& sent, std::string& tail) const override;

 private:
  // Takes the outside-only links out of `text`; true when it took any.
  bool Strip(const TurnContext& ctx, std::string& text) const;
  TrustedCorpus agent_file_;
  std::string note_;
};

}  // namespace reins
