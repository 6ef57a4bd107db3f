// EmpathyFirst rail (seed 000's HEAR enforcement layer): when the person shares
// something emotional and the reply's first sentence reports an action or a result
// ("I've asked the pastoral team to visit...", "Your prayer request has been
// submitted", "Here are three groups...") instead of acknowledging the person, an
// empathetic opener is put first. A safety net behind deferral, not the main mechanism.
//
// The first sentence is judged by what it does, not by a fixed list of tool words: it
// acknowledges ("I'm so sorry", "That sounds hard", "Thank you for telling me") or it
// reports (a first-person past or future action, a passive result, "Here is", "Done").
// Everything is configurable per agent (docs/deferral.md): `emotional_patterns`,
// `acknowledgement_patterns`, extra `result_opener_patterns`, and `openers`, each a
// text or {match, text} (the first whose `match` fits the person's message wins).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <re2/re2.h>

#include "turn/policy.h"

namespace reins {

class EmpathyFirst final : public Policy {
 public:
  explicit EmpathyFirst(const Json& config);
  std::string_view Name() const override { return "empathy_first"; }
  Rail rail() const override { return Rail::kBySentence; }
  bool ReviewReply(TurnContext& ctx, std::string& reply) const override;
  // Judges the reply's first sentence before it is sent; the rest pass.
  bool ReviewSentence(TurnContext& ctx, const std::string& sent, std::string& sentence) const override;

  // What a first sentence does, by the rail's rules and the configured patterns.
  bool Acknowledges(const std::string& sentence) const;
  bool ReportsResult(const std::string& sentence) const;

 private:
  struct Opener {
    std::unique_ptr<RE2> match;  // null: any message
    std::string text;
  };
  std::vector<std::unique_ptr<RE2>> emotional_;
  std::vector<std::unique_ptr<RE2>> acknowledgements_;
  std::vector<std::unique_ptr<RE2>> result_openers_;
  std::vector<Opener> openers_;
};

}  // namespace reins
