// ActNotDescribe (`rails.act_not_describe`, docs/act.md): governance that brings the task
// home. When the model answers with text that announces, narrates or claims an action
// of one of the agent's tools ("Let me look up your contacts", "I've passed your request
// to the care team") and no call made it in this turn, the loop asks once more with tool
// choice forced to that tool. A write counts only when the person's message asked for
// it: the request, not the model's words, authorises a write.
//
// At most one such retry per turn (I9). Whatever is still described but not done when
// the reply is final is never delivered as fact: the sentence is taken out and the
// reply says plainly what was not done (`act.missing`).
#pragma once

#include <memory>
#include <string>

#include "policy/act/action_talk.h"
#include "turn/policy.h"

namespace reins {

// The mechanism's state in one turn.
struct ActTurn {
  std::string forced;  // the tool of the turn's one forced retry; empty until then
};

class ActNotDescribe final : public Policy {
 public:
  // `reader`: the agent's, shared (policy/act/reply_reading.h); none makes its own.
  ActNotDescribe(const AgentConfig& config, const Json& rail_config, std::shared_ptr<const ActionReader> reader = nullptr);
  std::string_view Name() const override { return "act_not_describe"; }
  std::optional<std::string> RequiredToolMissing(TurnContext& ctx) const override;
  Rail rail() const override { return Rail::kBySentence; }
  // The sentences that describe what was not done go; a plain statement takes their place.
  bool ReviewReply(TurnContext& ctx, std::string& reply) const override;
  // Streamed, those sentences were sent (a call may still follow them, the forced one
  // included): once the reply's own text is all sent, the plain statement is appended.
  bool CloseReply(TurnContext& ctx, const std::string& sent, std::string& tail) const override;

 private:
  // What `reply` says is done, or about to be, that did not run for the request
  // (`act.missing` for each); the plain statements that say so.
  std::vector<ActionTalk> Unmade(TurnContext& ctx, const std::string& reply) const;
  std::string NotDone(const std::vector<ActionTalk>& unmade) const;
  std::shared_ptr<const ActionReader> reader_;
  const AgentConfig& config_;
  std::string not_done_;  // "{title}" is replaced by the tool's title
};

}  // namespace reins
