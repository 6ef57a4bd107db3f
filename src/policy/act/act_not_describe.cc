#include "policy/act/act_not_describe.h"

#include <algorithm>

#include "domain/text.h"
#include "policy/act/reply_reading.h"
#include "policy/act/speech.h"
#include "policy/act/undone_claims.h"

namespace reins {
namespace {

constexpr const char* kDefaultNotDone = "I was not able to complete the {title} just now, so it has not been done. Please ask again.";

Json TalkEvent(const ActionTalk& talk) {
  return {{"tool", talk.tool}, {"mode", ActionModeName(talk.mode)}, {"sentence", talk.sentence}};
}

}  // namespace

ActNotDescribe::ActNotDescribe(const AgentConfig& config, const Json& rail_config, std::shared_ptr<const ActionReader> reader)
    : reader_(ReaderOr(std::move(reader), config)), config_(config), not_done_(rail_config.value("not_done", std::string(kDefaultNotDone))) {}

std::optional<std::string> ActNotDescribe::RequiredToolMissing(TurnContext& ctx) const {
  // The loop of a chat turn only: a plan step has its own strict retry of the tools it
  // needs (docs/plan.md), an audit's gather round its own list of tools and bound.
  if (ctx.purpose != Purpose::kChat) return std::nullopt;
  if (ctx.history().empty() || ctx.history().back().role != Role::kAssistant) return std::nullopt;
  // One retry per turn, and only within limits.max_rounds; otherwise the review makes
  // the reply honest. Both are known before the reply is read.
  ActTurn& turn = ctx.Slot<ActTurn>();
  if (!turn.forced.empty() || ctx.loop_rounds >= ctx.config.max_rounds) return std::nullopt;
  std::optional<ActionTalk> unmade = reader_->UnmadeCall(ctx.user_text(), ctx.history().back().text, ctx.RequestTools());
  if (!unmade) return std::nullopt;
  turn.forced = unmade->tool;
  ctx.Emit("act.retry", TalkEvent(*unmade));
  return unmade->tool;
}

std::vector<ActionTalk> ActNotDescribe::Unmade(TurnContext& ctx, const std::string& reply) const {
  const std::vector<std::string> ran = ctx.RequestTools();
  // A call of the tool that was made and did not happen is UndoneClaims' to tell.
  std::vector<std::string> tried;
  for (const UndoneCall& u : UndoneCalls(ctx)) tried.push_back(u.tool->name);
  std::vector<ActionTalk> unmade;
  for (const ActionTalk& talk : ReadReply(ctx, *reader_, reply)) {
    if (std::find(ran.begin(), ran.end(), talk.tool) != ran.end()) continue;
    if (std::find(tried.begin(), tried.end(), talk.tool) != tried.end()) continue;
    if (talk.writes && !talk.requested) continue;  // honest_claims' case: nobody asked for it
    unmade.push_back(talk);
  }
  // "I've taken care of that for you." when nothing at all ran for the request: a claim
  // whose tool the request does not tell, false whichever it is.
  if (ran.empty()) {
    for (const std::string& piece : Sentences(reply)) {
      const std::string sentence = speech::Trim(piece);
      const bool known = std::any_of(unmade.begin(), unmade.end(), [&](const ActionTalk& t) { return t.sentence == sentence; });
      if (!known && !sentence.empty() && speech::IsGeneric(speech::WithoutPleasantries(Words(sentence)))) {
        unmade.push_back(ActionTalk{"", ActionMode::kGeneric, sentence, false, false});
      }
    }
  }
  const ActTurn& turn = ctx.Slot<ActTurn>();
  for (const ActionTalk& talk : unmade) {
    Json event = TalkEvent(talk);
    event["reason"] = turn.forced == talk.tool ? "retried"
                      : !turn.forced.empty()   ? "retry_spent"
                      : ctx.loop_rounds >= ctx.config.max_rounds ? "no_round_left"
                                                                 : "no_retry";
    ctx.Emit("act.missing", std::move(event));
  }
  return unmade;
}

// One statement per tool, in the order the reply named them.
std::string ActNotDescribe::NotDone(const std::vector<ActionTalk>& unmade) const {
  std::string out;
  std::vector<std::string> told;
  for (const ActionTalk& talk : unmade) {
    if (std::find(told.begin(), told.end(), talk.tool) != told.end()) continue;
    told.push_back(talk.tool);
    const ToolDef* tool = config_.FindTool(talk.tool);
    const std::string title = tool != nullptr ? tool->title : talk.tool.empty() ? "request" : talk.tool;
    std::string text = not_done_;
    if (size_t at = text.find("{title}"); at != std::string::npos) text.replace(at, 7, title);
    out += (out.empty() ? "" : " ") + text;
  }
  return out;
}

bool ActNotDescribe::ReviewReply(TurnContext& ctx, std::string& reply) const {
  std::vector<ActionTalk> unmade = Unmade(ctx, reply);
  if (unmade.empty()) return false;
  std::vector<std::string> drop;
  for (const ActionTalk& talk : unmade) drop.push_back(talk.sentence);
  const std::string kept = WithoutSentences(reply, drop);
  reply = kept + (kept.empty() ? "" : " ") + NotDone(unmade);
  return true;
}

bool ActNotDescribe::CloseReply(TurnContext& ctx, const std::string& sent, std::string& tail) const {
  std::vector<ActionTalk> unmade = Unmade(ctx, sent);
  if (unmade.empty()) return false;
  tail += (sent.empty() ? "" : " ") + NotDone(unmade);
  return true;
}

}  // namespace reins
