#include "policy/rails/honest_claims.h"

#include "policy/rails/rail_text.h"

namespace reins {
namespace {

constexpr const char* kDefaultClaims =
    R"((?i)\b(submitted|saved|sent|booked|scheduled|flagged|recorded|registered|logged|created|notified|signed (you )?up|passed (it )?(on|along))\b)";
constexpr const char* kDefaultCorrection =
    "(Correction: I was not able to complete the {title} just now. Please try again or contact us directly.)";

// Does `sentence` talk about `tool`? Its name, its title, or a distinctive word of the
// title ("appointment" for "appointment booking"); generic words do not count.
bool Mentions(const std::string& sentence, const ToolDef& tool) {
  if (sentence.find(tool.name) != std::string::npos || ContainsIgnoringCase(sentence, tool.title)) return true;
  static const char* kGeneric[] = {"request", "information", "details", "search", "lookup", "message", "follow-up"};
  size_t start = 0;
  while (start <= tool.title.size()) {
    size_t end = tool.title.find(' ', start);
    if (end == std::string::npos) end = tool.title.size();
    std::string word = tool.title.substr(start, end - start);
    bool generic = false;
    for (const char* g : kGeneric) generic = generic || word == g;
    if (word.size() >= 5 && !generic && ContainsIgnoringCase(sentence, word)) return true;
    start = end + 1;
  }
  return false;
}

bool Succeeded(const TurnContext& ctx, const std::string& tool) {
  for (const ToolOutcome& o : ctx.result.tools) {
    if (o.name != tool) continue;
    if (o.SucceededOrQueued()) return true;  // a pending deferred call: the failure note's job
  }
  return false;
}

}  // namespace

HonestClaims::HonestClaims(const AgentConfig& config, const Json& rail_config) : config_(config) {
  Json patterns = rail_config.value("claim_patterns", Json::array({kDefaultClaims}));
  claims_ = CompilePatterns(patterns.empty() ? Json::array({kDefaultClaims}) : patterns);
  correction_ = rail_config.value("correction", std::string(kDefaultCorrection));
}

bool HonestClaims::ReviewReply(TurnContext& ctx, std::string& reply) const {
  std::vector<std::string> sentences = Sentences(reply);
  std::string corrections;
  for (const ToolDef& tool : config_.tools) {
    if (Succeeded(ctx, tool.name)) continue;
    bool claimed = false;
    for (const std::string& s : sentences) {
      if (Mentions(s, tool) && AnyMatches(claims_, s)) claimed = true;
    }
    if (!claimed) continue;
    std::string text = correction_;
    if (size_t at = text.find("{title}"); at != std::string::npos) text.replace(at, 7, tool.title);
    corrections += " " + text;
    ctx.Emit("honest_claims.corrected", {{"tool", tool.name}});
  }
  if (corrections.empty()) return false;
  reply += corrections;
  return true;
}

}  // namespace reins
