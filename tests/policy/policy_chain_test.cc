// PolicyChain: each hook's rule lives in the chain, not in the stages; and the worked
// example of docs/architecture.md ("Adding a mechanism"), compiled: a mechanism whose
// state lives in slots of its own, so adding it touches no shared struct.
#include "turn/policy.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/policy_context.h"

namespace reins {
namespace {

// A guard that gives a fixed verdict and counts how often it was asked.
class Fixed final : public Policy {
 public:
  Fixed(std::string name, CallVerdict verdict) : name_(std::move(name)), verdict_(std::move(verdict)) {}
  std::string_view Name() const override { return name_; }
  CallVerdict Guard(TurnContext&, const ProposedCall&) const override {
    ++asked;
    return verdict_;
  }
  Rail rail() const override { return Rail::kBySentence; }
  bool ReviewReply(TurnContext&, std::string& reply) const override {
    if (verdict_.kind != CallVerdict::Kind::kContinue) return false;
    reply += " [" + name_ + "]";
    return true;
  }
  bool ReviewSentence(TurnContext&, const std::string&, std::string& sentence) const override {
    sentence += "<" + name_ + ">";
    return true;
  }
  bool CloseReply(TurnContext&, const std::string& sent, std::string& tail) const override {
    tail += (sent.empty() ? "" : " ") + ("[" + name_ + "]");
    return true;
  }
  mutable int asked = 0;

 private:
  std::string name_;
  CallVerdict verdict_;
};

TEST(PolicyChainTest, TheFirstVerdictOtherThanContinueWinsAndNamesItsPolicy) {
  testing::PolicyContext p;
  PolicyChain chain;
  auto first = std::make_unique<Fixed>("first", CallVerdict::Continue());
  auto second = std::make_unique<Fixed>("second", CallVerdict::Reject("schema", "fix it"));
  auto third = std::make_unique<Fixed>("third", CallVerdict::Replace("queued"));
  const Fixed* third_seen = third.get();
  chain.Add(std::move(first));
  chain.Add(std::move(second));
  chain.Add(std::move(third));
  ToolCall call{"c1", "send", "{}", Json::object(), true};
  GuardDecision d = chain.Guard(p.ctx, {&call, nullptr, 0, false});
  EXPECT_EQ(d.verdict.kind, CallVerdict::Kind::kReject);
  EXPECT_EQ(d.policy, "second");
  EXPECT_EQ(third_seen->asked, 0) << "a policy after the deciding one is not asked";
}

TEST(PolicyChainTest, EveryRailReviewsTheReplyInOrder) {
  testing::PolicyContext p;
  PolicyChain chain;
  chain.Add(std::make_unique<Fixed>("a", CallVerdict::Continue()));
  chain.Add(std::make_unique<Fixed>("b", CallVerdict::Continue()));
  std::vector<std::string> fired;
  std::string reply = chain.ReviewReply(p.ctx, "Hello.", [&](std::string_view rail, const std::string&, const std::string&) {
    fired.emplace_back(rail);
  });
  EXPECT_EQ(reply, "Hello. [a] [b]");
  EXPECT_EQ(fired, (std::vector<std::string>{"a", "b"}));
}

TEST(PolicyChainTest, AStreamedReplyMeetsEveryRailPerSentenceThenAtItsEnd) {
  testing::PolicyContext p;
  PolicyChain chain;
  chain.Add(std::make_unique<Fixed>("a", CallVerdict::Continue()));
  chain.Add(std::make_unique<Fixed>("b", CallVerdict::Continue()));
  auto ignore = [](std::string_view, const std::string&, const std::string&) {};
  EXPECT_EQ(chain.ReviewSentence(p.ctx, "", "Hello.", ignore), "Hello.<a><b>");
  // Each rail sees what the ones before it appended.
  EXPECT_EQ(chain.CloseReply(p.ctx, "Hello.", ignore), " [a] [b]");
  EXPECT_EQ(chain.WholeReplyRail(), "");
}

// A policy that is not a rail is never asked to review; one that judges only whole
// replies holds a streamed reply, and the chain names it.
class WholeOnly final : public Policy {
 public:
  explicit WholeOnly(Rail rail) : rail_(rail) {}
  std::string_view Name() const override { return "whole_only"; }
  Rail rail() const override { return rail_; }
  bool ReviewReply(TurnContext&, std::string& reply) const override {
    reply = "[rewritten]";
    return true;
  }

 private:
  Rail rail_;
};

TEST(PolicyChainTest, OnlyRailsReviewAndAWholeReplyRailIsNamed) {
  testing::PolicyContext p;
  PolicyChain not_a_rail;
  not_a_rail.Add(std::make_unique<WholeOnly>(Policy::Rail::kNone));
  auto ignore = [](std::string_view, const std::string&, const std::string&) {};
  EXPECT_EQ(not_a_rail.ReviewReply(p.ctx, "Hello.", ignore), "Hello.");
  EXPECT_EQ(not_a_rail.WholeReplyRail(), "");
  PolicyChain whole;
  whole.Add(std::make_unique<WholeOnly>(Policy::Rail::kWholeReply));
  EXPECT_EQ(whole.ReviewReply(p.ctx, "Hello.", ignore), "[rewritten]");
  EXPECT_EQ(whole.ReviewSentence(p.ctx, "", "Hello.", ignore), "Hello.") << "never asked per sentence";
  EXPECT_EQ(whole.WholeReplyRail(), "whole_only");
}

// --- The worked example: a mechanism that refuses the same call twice in one turn ---
// (docs/architecture.md shows it as src/policy/repeat/repeat_guard.{h,cc} plus one line
// in BuildPolicyChain).
struct RepeatTurn {  // this turn's calls so far: the mechanism's turn slot
  std::vector<std::string> seen;
};

class RepeatGuard final : public Policy {
 public:
  std::string_view Name() const override { return "repeat"; }
  CallVerdict Guard(TurnContext& ctx, const ProposedCall& p) const override {
    std::vector<std::string>& seen = ctx.Slot<RepeatTurn>().seen;
    const std::string key = p.call->name + " " + p.call->args.dump();
    if (std::find(seen.begin(), seen.end(), key) == seen.end()) {
      seen.push_back(key);
      return CallVerdict::Continue();
    }
    Json& refused = ctx.session.Slot(Name());  // across turns: how often it refused
    refused = refused.is_number() ? refused.get<int>() + 1 : 1;
    return CallVerdict::Reject("repeat", p.call->name + " already ran with these arguments in this turn.");
  }
};

TEST(PolicyChainTest, AMechanismKeepsItsStateInSlotsOfItsOwn) {
  testing::PolicyContext p;
  PolicyChain chain;
  chain.Add(std::make_unique<RepeatGuard>());
  ToolCall a{"c1", "send", "{}", Json{{"to", "u1"}}, true};
  ToolCall again{"c2", "send", "{}", Json{{"to", "u1"}}, true};
  ToolCall other{"c3", "send", "{}", Json{{"to", "u2"}}, true};
  EXPECT_EQ(chain.Guard(p.ctx, {&a, nullptr, 0, false}).verdict.kind, CallVerdict::Kind::kContinue);
  EXPECT_EQ(chain.Guard(p.ctx, {&other, nullptr, 1, false}).verdict.kind, CallVerdict::Kind::kContinue);
  GuardDecision d = chain.Guard(p.ctx, {&again, nullptr, 2, false});
  EXPECT_EQ(d.verdict.kind, CallVerdict::Kind::kReject);
  EXPECT_EQ(d.policy, "repeat");
  EXPECT_EQ(p.ctx.Slot<RepeatTurn>().seen.size(), 2u);

  // The session slot is stored with the session and read back with it.
  SessionState back = SessionState::FromJson(p.state.ToJson());
  EXPECT_EQ(back.Slot("repeat"), 1);
  // A new turn starts with empty turn slots.
  testing::PolicyContext next;
  EXPECT_TRUE(next.ctx.Slot<RepeatTurn>().seen.empty());
}

}  // namespace
}  // namespace reins
