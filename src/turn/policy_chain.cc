#include "turn/policy.h"

#include <algorithm>

namespace reins {

AdmitVerdict PolicyChain::Admit(TurnContext& ctx) const {
  for (const auto& policy : policies_) {
    AdmitVerdict verdict = policy->Admit(ctx);
    if (verdict.kind != AdmitVerdict::Kind::kAdmit) return verdict;
  }
  return AdmitVerdict::Admit();
}

std::optional<std::string> PolicyChain::Preempt(TurnContext& ctx) const {
  for (const auto& policy : policies_) {
    if (std::optional<std::string> reply = policy->Preempt(ctx)) return reply;
  }
  return std::nullopt;
}

void PolicyChain::ShapeCalls(TurnContext& ctx, std::vector<ProposedCall>& calls) const {
  for (const auto& policy : policies_) policy->ShapeCalls(ctx, calls);
}

GuardDecision PolicyChain::Guard(TurnContext& ctx, const ProposedCall& call) const {
  for (const auto& policy : policies_) {
    CallVerdict verdict = policy->Guard(ctx, call);
    if (verdict.kind != CallVerdict::Kind::kContinue) return {std::move(verdict), policy->Name()};
  }
  return {CallVerdict::Continue(), {}};
}

void PolicyChain::Observe(TurnContext& ctx, const ProposedCall& call, const ResultEnvelope& result) const {
  for (const auto& policy : policies_) policy->Observe(ctx, call, result);
}

void PolicyChain::OnClarificationAnswered(TurnContext& ctx, const PendingClarification& pending,
                                          const std::string& option_id) const {
  for (const auto& policy : policies_) policy->OnClarificationAnswered(ctx, pending, option_id);
}

std::optional<Resumption> PolicyChain::Resume(TurnContext& ctx) const {
  for (const auto& policy : policies_) {
    if (std::optional<Resumption> resumption = policy->Resume(ctx)) return resumption;
  }
  return std::nullopt;
}

void PolicyChain::OnTurnEnd(TurnContext& ctx) const {
  for (const auto& policy : policies_) policy->OnTurnEnd(ctx);
}

std::optional<std::string> PolicyChain::RequiredToolMissing(TurnContext& ctx) const {
  for (const auto& policy : policies_) {
    if (std::optional<std::string> tool = policy->RequiredToolMissing(ctx)) return tool;
  }
  return std::nullopt;
}

std::string PolicyChain::ReviewReply(TurnContext& ctx, std::string reply, const RailFired& fired) const {
  for (const auto& policy : policies_) {
    if (policy->rail() == Policy::Rail::kNone) continue;
    std::string before = reply;
    if (policy->ReviewReply(ctx, reply)) fired(policy->Name(), before, reply);
  }
  return reply;
}

std::string PolicyChain::ReviewSentence(TurnContext& ctx, const std::string& sent, std::string sentence,
                                        const RailFired& fired) const {
  for (const auto& policy : policies_) {
    if (policy->rail() != Policy::Rail::kBySentence) continue;
    std::string before = sentence;
    if (policy->ReviewSentence(ctx, sent, sentence)) fired(policy->Name(), before, sentence);
  }
  return sentence;
}

std::string PolicyChain::CloseReply(TurnContext& ctx, const std::string& sent, const RailFired& fired) const {
  std::string tail;
  for (const auto& policy : policies_) {
    if (policy->rail() != Policy::Rail::kBySentence) continue;
    std::string before = tail;
    if (policy->CloseReply(ctx, sent + tail, tail)) fired(policy->Name(), before, tail);
  }
  return tail;
}

bool PolicyChain::Waits(TurnContext& ctx, const std::string& sentence) const {
  return std::any_of(policies_.begin(), policies_.end(), [&](const auto& policy) {
    return policy->rail() == Policy::Rail::kBySentence && policy->Waits(ctx, sentence);
  });
}

std::string_view PolicyChain::WholeReplyRail() const {
  for (const auto& policy : policies_) {
    if (policy->rail() == Policy::Rail::kWholeReply) return policy->Name();
  }
  return {};
}

}  // namespace reins
