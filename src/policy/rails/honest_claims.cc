#include "policy/rails/honest_claims.h"

#include "policy/rails/rail_text.h"

namespace reins {
namespace {

constexpr const char* kDefaultClaims =
    R"((?i)\b(submitted|saved|sent|booked|scheduled|flagged|recorded|registered|logged|created|notified|signed (you )?up|passed (it )?(on|along))\b)";
constexpr const char* kDefaultCorrection =
    "(Correction: I was not able to complete the {title} just now. Please try again or contact us directly.)";

bool Succeeded(const TurnContext& ctx, const std::string& tool) {
  for (const ToolOutcome& o : ctx.result.tools) {
    if (o.name != tool) continue;
    if (o.status == ToolOutcome::Status::kDeferred) return true;  // pending: the failure note's job
    if (o.status == ToolOutcome::Status::kExecuted && o.result && o.result->success) return true;
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
      bool names_tool = ContainsIgnoringCase(s, tool.title) || s.find(tool.name) != std::string::npos;
      if (names_tool && AnyMatches(claims_, s)) claimed = true;
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
