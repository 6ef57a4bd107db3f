#include "policy/rails/honest_claims.h"

#include <algorithm>

#include "policy/act/reply_reading.h"
#include "policy/act/speech.h"
#include "policy/act/undone_claims.h"
#include "policy/rails/rail_text.h"

namespace reins {
namespace {

constexpr const char* kDefaultClaims =
    R"((?i)\b(submitted|saved|sent|booked|scheduled|flagged|recorded|registered|logged|created|notified|signed (you )?up|passed (it )?(on|along))\b)";
constexpr const char* kDefaultCorrection =
    "I was not able to complete the {title} just now. Please try again or contact us directly.";

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

// The tools whose calls this turn made and did not happen: UndoneClaims' to tell.
std::vector<std::string> Tried(const TurnContext& ctx) {
  std::vector<std::string> tried;
  for (const UndoneCall& u : UndoneCalls(ctx)) tried.push_back(u.tool->name);
  return tried;
}

// A claim of `tool` is this rail's to correct: it neither ran nor was tried.
bool MineToCorrect(const TurnContext& ctx, const std::vector<std::string>& tried, const std::string& tool) {
  return !Succeeded(ctx, tool) && std::find(tried.begin(), tried.end(), tool) == tried.end();
}

// A streamed reply's claims that waited for their response's calls: whether any did (the
// sentences sent before the first are not read again), and the tools of those then
// dropped, which its close says were not done.
struct HeldClaims {
  bool waited = false;
  std::vector<const ToolDef*> dropped;
};

}  // namespace

HonestClaims::HonestClaims(const AgentConfig& config, const Json& rail_config, std::shared_ptr<const ActionReader> reader)
    : config_(config), reader_(ReaderOr(std::move(reader), config)) {
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
// A tool whose call this turn made and did not happen is UndoneClaims' to tell.
HonestClaims::Unbacked HonestClaims::Find(TurnContext& ctx, const std::string& reply) const {
  const std::vector<std::string> tried = Tried(ctx);
  Unbacked out;
  auto claimed = [&](const ToolDef* tool, const std::string& sentence) {
    if (tool == nullptr || !MineToCorrect(ctx, tried, tool->name)) return;
    if (std::find(out.tools.begin(), out.tools.end(), tool) == out.tools.end()) out.tools.push_back(tool);
    const std::string trimmed = speech::Trim(sentence);
    if (std::find(out.sentences.begin(), out.sentences.end(), trimmed) == out.sentences.end()) {
      out.sentences.push_back(trimmed);
    }
  };
  for (const std::string& s : Sentences(reply)) {
    const ToolDef* best = nullptr;
    for (const auto& [tool, patterns] : tool_claims_) {
      if (best == nullptr && AnyMatches(patterns, s)) best = tool;
    }
    if (best != nullptr) {
      claimed(best, s);
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
    claimed(best, s);
  }
  for (const ActionTalk& talk : ReadReply(ctx, *reader_, reply)) {
    if (talk.mode != ActionMode::kClaim && talk.mode != ActionMode::kGeneric && talk.mode != ActionMode::kResult) continue;
    claimed(config_.FindTool(talk.tool), talk.sentence);
  }
  return out;
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

// The claims go and the correction takes their place: the person reads what was not
// done once, not a claim and then its retraction.
bool HonestClaims::ReviewReply(TurnContext& ctx, std::string& reply) const {
  const Unbacked unbacked = Find(ctx, reply);
  if (unbacked.tools.empty()) return false;
  const std::string kept = WithoutSentences(reply, unbacked.sentences);
  const std::string corrections = Corrections(ctx, unbacked.tools);
  reply = kept.empty() ? corrections.substr(1) : kept + corrections;
  return true;
}

bool HonestClaims::Waits(TurnContext& ctx, const std::string& sentence) const {
  if (Find(ctx, sentence).tools.empty()) return false;
  ctx.Slot<HeldClaims>().waited = true;
  return true;
}

// A streamed sentence, once its response's calls ran: a claim still unbacked is not sent.
// Before anything waited, Waits has just read the sentence and found no claim.
bool HonestClaims::ReviewSentence(TurnContext& ctx, const std::string& /*sent*/, std::string& sentence) const {
  if (!ctx.Slot<HeldClaims>().waited) return false;
  const Unbacked unbacked = Find(ctx, sentence);
  if (unbacked.tools.empty()) return false;
  std::vector<const ToolDef*>& dropped = ctx.Slot<HeldClaims>().dropped;
  for (const ToolDef* tool : unbacked.tools) {
    if (std::find(dropped.begin(), dropped.end(), tool) == dropped.end()) dropped.push_back(tool);
  }
  sentence.clear();
  return true;
}

// The end of a streamed reply: what its dropped claims said was done, and was not, is
// said once (a claim that went out unbacked, if a rail before this one let it, too).
bool HonestClaims::CloseReply(TurnContext& ctx, const std::string& sent, std::string& tail) const {
  std::vector<const ToolDef*> tools = Find(ctx, sent).tools;
  const std::vector<std::string> tried = Tried(ctx);
  for (const ToolDef* tool : ctx.Slot<HeldClaims>().dropped) {
    if (MineToCorrect(ctx, tried, tool->name) && std::find(tools.begin(), tools.end(), tool) == tools.end()) {
      tools.push_back(tool);
    }
  }
  if (tools.empty()) return false;
  std::string corrections = Corrections(ctx, tools);
  tail += sent.empty() ? corrections.substr(1) : corrections;
  return true;
}

}  // namespace reins
