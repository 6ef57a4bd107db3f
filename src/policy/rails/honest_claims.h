// HonestClaims rail (I5): a reply that claims an action ("submitted", "sent",
// "booked"..., or one of a tool's own `claims` patterns) of a tool that did not run for
// the request (nor is queued) loses the claim, and the correction takes its place
// (streamed, the claim waits for its response's calls and is never sent unbacked). A
// claim act_not_describe's reader finds ("I've let Jo know", "Message sent to Jane",
// "The pharmacy has your refill") counts too. A tool
// whose call this turn made and did not happen (refused, skipped, failed...) is
// UndoneClaims' (policy/act/undone_claims.h), which is always on. A deferred call still
// waiting in the outbox is pending, not failed: the failure note covers it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <re2/re2.h>

#include "policy/act/action_talk.h"
#include "turn/policy.h"

namespace reins {

class HonestClaims final : public Policy {
 public:
  // `reader`: the agent's, shared (policy/act/reply_reading.h); none makes its own.
  HonestClaims(const AgentConfig& config, const Json& rail_config, std::shared_ptr<const ActionReader> reader = nullptr);
  std::string_view Name() const override { return "honest_claims"; }
  Rail rail() const override { return Rail::kBySentence; }
  bool ReviewReply(TurnContext& ctx, std::string& reply) const override;
  // Streamed, a sentence that claims an action not yet run waits until its response's
  // calls ran (the model may write "I've saved that" and then make the call); judged
  // then, a claim still unbacked is dropped, and CloseReply says what was not done.
  bool Waits(TurnContext& ctx, const std::string& sentence) const override;
  bool ReviewSentence(TurnContext& ctx, const std::string& sent, std::string& sentence) const override;
  bool CloseReply(TurnContext& ctx, const std::string& sent, std::string& tail) const override;

 private:
  // The tools `reply` claims an action of that did not run for the request, and the
  // sentences that claim them.
  struct Unbacked {
    std::vector<const ToolDef*> tools;
    std::vector<std::string> sentences;
  };
  Unbacked Find(TurnContext& ctx, const std::string& reply) const;
  std::string Corrections(TurnContext& ctx, const std::vector<const ToolDef*>& tools) const;
  const AgentConfig& config_;
  std::shared_ptr<const ActionReader> reader_;  // claims in words no pattern lists: "I also sent her a quick note"
  std::vector<std::unique_ptr<RE2>> claims_;
  // Each tool's own `claims` patterns: a sentence matching one claims that tool's action.
  std::vector<std::pair<const ToolDef*, std::vector<std::unique_ptr<RE2>>>> tool_claims_;
  std::string correction_;  // "{title}" is replaced by the tool's title
};

}  // namespace reins
