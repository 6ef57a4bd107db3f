#include "policy/rails/empathy_first.h"

#include "policy/rails/rail_text.h"

namespace reins {

EmpathyFirst::EmpathyFirst(const Json& config) {
  emotional_ = CompilePatterns(config.value("emotional_patterns", Json::array()));
  result_openers_ = CompilePatterns(config.value("result_opener_patterns", Json::array()));
  for (const Json& o : config.value("openers", Json::array())) {
    if (o.is_string()) openers_.push_back(o.get<std::string>());
  }
}

bool EmpathyFirst::ReviewReply(TurnContext& ctx, std::string& reply) const {
  if (openers_.empty() || !AnyMatches(emotional_, ctx.user_text)) return false;
  // Only the opening counts: a confirmation later in the reply is fine.
  std::string opening = reply.substr(0, 150);
  if (!AnyMatches(result_openers_, opening)) return false;
  // Deterministic choice: the same message always gets the same opener.
  const std::string& opener = openers_[StableHash(ctx.user_text) % openers_.size()];
  reply = opener + " " + reply;
  return true;
}

}  // namespace reins
