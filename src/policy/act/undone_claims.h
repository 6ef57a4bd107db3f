// UndoneClaims (I5 on every path, docs/act.md "Calls that did not happen"): a reply never
// announces, reports or promises an action whose call this turn did not carry out.
//
// A call is undone when a guard refused it, it was skipped (after a call that stopped
// the chain, out of time), withdrawn, denied by the person, failed, or is uncertain (an
// earlier try was interrupted, pipeline/write_ledger.h). Whatever the model then wrote,
// each sentence that speaks of such a call's action as happening, done or to come ("I'm
// sending the refill request now", "I've put in the refill", "The pharmacy has your
// refill", "it will be ready today") is taken out, and the reply says once, plainly,
// what was not done. Claims are judged per call, by the action and its object: "I sent
// David the summary" stays when that send ran and only the one to Maria was denied.
//
// Always on (not a configured rail): the runtime knows these calls did not happen, so no
// reply may say they did. act_not_describe and honest_claims leave such tools to it, and
// a failed deferred write's note in `await` mode uses the same reading
// (WithoutClaimsOf). An uncertain call's sentence goes too; what the person is told of it
// is the runtime's own note (it may or may not have happened).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "policy/act/action_talk.h"
#include "turn/policy.h"

namespace reins {

// A call of this turn that did not happen, and why: refused, skipped, withdrawn,
// denied, failed or uncertain.
struct UndoneCall {
  const ToolDef* tool = nullptr;
  const ToolOutcome* outcome = nullptr;
  std::string why;
};

// The calls of this turn that did not happen, leaving out those a later call of the
// same tool made good (a call refused for its shape, its schema or an id, and then
// proposed again and run).
std::vector<UndoneCall> UndoneCalls(const TurnContext& ctx);

// `reply` without the sentences in `drop` (as ActionTalk and speech::Trim give them),
// with no space left in front or behind: what each rail that takes sentences out keeps.
std::string WithoutSentences(std::string_view reply, const std::vector<std::string>& drop);

// A call by its tool and arguments.
struct CallOf {
  std::string tool;
  Json args;
};

// Whether `sentence`, which speaks of an action of its tool, claims one of `undone`'s
// calls of that tool: always when no call of it in `done` ran; otherwise only when it
// names the undone call's arguments and not a done one's ("I sent David the summary"
// stays when that send ran and the one to Maria failed).
bool ClaimsUndone(const std::string& sentence, const std::string& tool, const std::vector<CallOf>& undone,
                  const std::vector<CallOf>& done);

// `reply` without the sentences that speak of an `undone` call's action as happening,
// done or to come (judged per call, as ClaimsUndone), with no space left in front or
// behind.
std::string WithoutClaimsOf(const ActionReader& reader, std::string_view user_text, std::string_view reply,
                            const std::vector<CallOf>& undone, const std::vector<CallOf>& done);

class UndoneClaims final : public Policy {
 public:
  // `reader`: the agent's, shared (policy/act/reply_reading.h); none makes its own.
  explicit UndoneClaims(const AgentConfig& config, std::shared_ptr<const ActionReader> reader = nullptr);
  std::string_view Name() const override { return "undone_calls"; }
  Rail rail() const override { return Rail::kBySentence; }
  bool ReviewReply(TurnContext& ctx, std::string& reply) const override;
  // Streamed: a sentence about an undone call is not sent (the calls ran before the
  // reply's text); once all is sent, the plain statement follows.
  bool ReviewSentence(TurnContext& ctx, const std::string& sent, std::string& sentence) const override;
  bool CloseReply(TurnContext& ctx, const std::string& sent, std::string& tail) const override;

 private:
  // The sentences of `reply` that claim an undone call's action, and the tools they claim.
  struct Claimed {
    std::vector<std::string> sentences;
    std::vector<std::string> tools;
  };
  Claimed Claims(TurnContext& ctx, const std::vector<UndoneCall>& undone, std::string_view reply) const;
  // The undone calls of `tools`.
  static std::vector<UndoneCall> Of(const std::vector<UndoneCall>& undone, const std::vector<std::string>& tools);
  // What was not done, once per tool, unless `reply` already says so; "" for none.
  std::string Statement(const std::vector<UndoneCall>& undone, std::string_view reply) const;
  const AgentConfig& config_;
  std::shared_ptr<const ActionReader> reader_;
};

}  // namespace reins
