#include "policy/rails/honest_claims.h"

#include <algorithm>

#include "policy/rails/rail_text.h"

namespace reins {
namespace {

constexpr const char* kDefaultClaims =
    R"((?i)\b(submitted|saved|sent|booked|scheduled|flagged|recorded|registered|logged|created|notified|signed (you )?up|passed (it )?(on|along))\b)";
constexpr const char* kDefaultCorrection =
    "(Correction: I was not able to complete the {title} just now. Please try again or contact us directly.)";

// How strongly `sentence` talks about `tool`: its name, its whole title, or
// distinctive words of the title ("appointment" for "appointment booking"); generic
// words do not count. 0: not at all.
int MentionScore(const std::string& sentence, const ToolDef& tool) {
  if (sentence.find(tool.name) != std::string::npos) return 1000;
  if (ContainsIgnoringCase(sentence, tool.title)) return 100 + static_cast<int>(tool.title.size());
  static const char* kGeneric[] = {"request", "information", "details", "search", "lookup", "message", "follow-up"};
  int score = 0;
  size_t start = 0;
  while (start <= tool.title.size()) {
    size_t end = tool.title.find(' ', start);
    if (end == std::string::npos) end = tool.title.size();
    std::string word = tool.title.substr(start, end - start);
    bool generic = false;
    for (const char* g : kGeneric) generic = generic || word == g;
    if (word.size() >= 5 && !generic && ContainsIgnoringCase(sentence, word)) score += 10;
    start = end + 1;
  }
  return score;
}

// It ran (or is queued: a pending deferred call is the failure note's job) for this
// request, in this turn or in the one a clarification or approval interrupted.
bool Succeeded(const TurnContext& ctx, const std::string& tool) {
  const std::vector<std::string> ran = ctx.RequestTools();
  return std::find(ran.begin(), ran.end(), tool) != ran.end();
}

}  // namespace

HonestClaims::HonestClaims(const AgentConfig& config, const Json& rail_config) : config_(config), reader_(config.tools) {
  Json patterns = rail_config.value("claim_patterns", Json::array({kDefaultClaims}));
  claims_ = CompilePatterns(patterns.empty() ? Json::array({kDefaultClaims}) : patterns);
  correction_ = rail_config.value("correction", std::string(kDefaultCorrection));
  for (const ToolDef& tool : config.tools) {
    if (!tool.claims.empty()) tool_claims_.emplace_back(&tool, CompilePatterns(Json(tool.claims)));
  }
}

// Each sentence that claims an action is about the one tool it mentions most clearly
// (a claim of "a visitor's contact details" is about the contact tool, not every tool
// with "visit" in its title). Only that tool's outcome decides whether it is corrected.
std::vector<const ToolDef*> HonestClaims::Unbacked(const TurnContext& ctx, const std::string& reply) const {
  std::vector<const ToolDef*> corrected;
  for (const std::string& s : Sentences(reply)) {
    const ToolDef* best = nullptr;
    for (const auto& [tool, patterns] : tool_claims_) {
      if (best == nullptr && AnyMatches(patterns, s)) best = tool;
    }
    if (best != nullptr) {
      if (!Succeeded(ctx, best->name) && std::find(corrected.begin(), corrected.end(), best) == corrected.end()) {
        corrected.push_back(best);
      }
      continue;
    }
    if (!AnyMatches(claims_, s)) continue;
    int best_score = 0;
    for (const ToolDef& tool : config_.tools) {
      int score = MentionScore(s, tool);
      if (score > best_score) {
        best = &tool;
        best_score = score;
      }
    }
    if (best == nullptr || Succeeded(ctx, best->name)) continue;
    if (std::find(corrected.begin(), corrected.end(), best) == corrected.end()) corrected.push_back(best);
  }
  for (const ActionTalk& talk : reader_.Read(ctx.user_text(), reply)) {
    if (talk.mode != ActionMode::kClaim && talk.mode != ActionMode::kGeneric) continue;
    const ToolDef* tool = config_.FindTool(talk.tool);
    if (tool == nullptr || Succeeded(ctx, tool->name)) continue;
    if (std::find(corrected.begin(), corrected.end(), tool) == corrected.end()) corrected.push_back(tool);
  }
  return corrected;
}

std::string HonestClaims::Corrections(TurnContext& ctx, const std::vector<const ToolDef*>& tools) const {
  std::string out;
  for (const ToolDef* tool : tools) {
    std::string text = correction_;
    if (size_t at = text.find("{title}"); at != std::string::npos) text.replace(at, 7, tool->title);
    out += " " + text;
    ctx.Emit("honest_claims.corrected", {{"tool", tool->name}});
  }
  return out;
}

bool HonestClaims::ReviewReply(TurnContext& ctx, std::string& reply) const {
  std::vector<const ToolDef*> unbacked = Unbacked(ctx, reply);
  if (unbacked.empty()) return false;
  reply += Corrections(ctx, unbacked);
  return true;
}

bool HonestClaims::CloseReply(TurnContext& ctx, const std::string& sent, std::string& tail) const {
  std::vector<const ToolDef*> unbacked = Unbacked(ctx, sent);
  if (unbacked.empty()) return false;
  std::string corrections = Corrections(ctx, unbacked);
  tail += sent.empty() ? corrections.substr(1) : corrections;
  return true;
}

}  // namespace reins
