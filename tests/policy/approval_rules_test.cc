// Approvals as the person meets them: which calls a rule holds (conditions), who may
// answer and with what (edits, messages, "always"), a lapse, and standing permissions.
#include <gtest/gtest.h>

#include "policy/approval/approval_answer.h"
#include "policy/approval/approval_rules.h"
#include "policy/approval/standing_permissions.h"
#include "support/policy_context.h"

namespace reins {
namespace {

ToolDef Refill(std::vector<ApprovalCondition> when) {
  ToolDef t;
  t.name = "refill";
  t.title = "refill";
  t.approval.required = true;
  t.approval.when = std::move(when);
  return t;
}

std::optional<ApprovalReason> Needs(const ToolDef& tool, const Json& args) {
  AgentConfig config;
  config.tools = {tool};
  return ApprovalRules(config).Needs(config.tools[0], args);
}

TEST(ApprovalRulesTest, EachOperatorComparesTheArgumentItNames) {
  auto holds = [](ConditionOp op, Json operand, Json value) {
    return Needs(Refill({{"quantity", op, std::move(operand)}}), {{"quantity", std::move(value)}}).has_value();
  };
  EXPECT_TRUE(holds(ConditionOp::kGt, 90, 91));
  EXPECT_FALSE(holds(ConditionOp::kGt, 90, 90));
  EXPECT_TRUE(holds(ConditionOp::kGe, 90, 90));
  EXPECT_TRUE(holds(ConditionOp::kLt, 10, 9.5));
  EXPECT_FALSE(holds(ConditionOp::kLe, 10, 11));
  EXPECT_TRUE(holds(ConditionOp::kEq, "oxycodone", "oxycodone"));
  EXPECT_TRUE(holds(ConditionOp::kNe, "oxycodone", "metformin"));
  EXPECT_TRUE(holds(ConditionOp::kIn, Json::array({"oxycodone", "morphine"}), "morphine"));
  EXPECT_FALSE(holds(ConditionOp::kIn, Json::array({"oxycodone", "morphine"}), "metformin"));
  EXPECT_TRUE(holds(ConditionOp::kMatches, "^C-II", "C-II oxycodone"));
  EXPECT_FALSE(holds(ConditionOp::kMatches, "^C-II", "metformin"));
}

TEST(ApprovalRulesTest, ACallWithoutConditionsWaitsForPolicyAndOneWithThemForItsCondition) {
  EXPECT_EQ(Needs(Refill({}), {{"quantity", 1}}), ApprovalReason::kPolicy);
  EXPECT_EQ(Needs(Refill({{"quantity", ConditionOp::kGt, 90}}), {{"quantity", 120}}), ApprovalReason::kCondition);
  ToolDef free = Refill({});
  free.approval.required = false;
  EXPECT_FALSE(Needs(free, {{"quantity", 500}}));
}

TEST(ApprovalRulesTest, EveryConditionMustHoldAndANestedPathIsFollowed) {
  ToolDef both = Refill({{"quantity", ConditionOp::kGt, 90}, {"$.drug.schedule", ConditionOp::kEq, "II"}});
  EXPECT_TRUE(Needs(both, {{"quantity", 120}, {"drug", {{"schedule", "II"}}}}));
  EXPECT_FALSE(Needs(both, {{"quantity", 120}, {"drug", {{"schedule", "IV"}}}}));
  EXPECT_FALSE(Needs(both, {{"quantity", 30}, {"drug", {{"schedule", "II"}}}}));
}

// A rule that cannot judge a call holds it: a model that sends "120" for a number does
// not slip past "above 90". An argument the call leaves out does not make it wait.
TEST(ApprovalRulesTest, AValueOfTheWrongTypeWaitsAndAMissingOneDoesNot) {
  ToolDef large = Refill({{"quantity", ConditionOp::kGt, 90}});
  EXPECT_EQ(Needs(large, {{"quantity", "120"}}), ApprovalReason::kCondition);
  EXPECT_EQ(Needs(large, {{"quantity", Json::array({1})}}), ApprovalReason::kCondition);
  EXPECT_FALSE(Needs(large, {{"drug", "metformin"}}));
}

// The session of a test: `refill` paused for `requested_by`, with `rule`'s answers.
struct Paused {
  explicit Paused(ApprovalRule rule, ApprovalReason reason = ApprovalReason::kCondition) : p({Tool(rule)}) {
    PendingApproval a;
    a.id = "a_1";
    a.tool = "refill";
    a.args = {{"drug", "metformin"}, {"quantity", 120}};
    a.reason = reason;
    a.requested_by = "ana";
    a.approvers = rule.approvers;
    a.allow_edit = rule.allow_edit;
    a.may_remember = rule.remember == RememberScope::kSession && reason != ApprovalReason::kUntrustedData;
    a.expires_at_ms = rule.ttl_s > 0 ? rule.ttl_s * 1000 : 0;
    p.state.pending_approval = a;
  }
  static ToolDef Tool(ApprovalRule rule) {
    ToolDef t = Refill({});
    t.approval = std::move(rule);
    t.approval.required = true;
    return t;
  }
  Status Answer(const std::string& speaker, ApprovalAnswer answer, std::vector<std::string> roles = {}) {
    p.ctx.input.speaker = speaker;
    p.ctx.input.roles = std::move(roles);
    p.ctx.input.approve = std::move(answer);
    return AnswerApproval(p.ctx);
  }
  // The data of the turn's first event named `type`; null when there is none.
  Json Event(std::string_view type) const {
    for (const TraceEvent& e : p.ctx.result.events) {
      if (e.name() == type) return e.data.json();
    }
    return nullptr;
  }
  testing::PolicyContext p;
};

TEST(AnswerApprovalTest, OnlyTheApproversMayAnswerAndARefusalChangesNothing) {
  Paused requester{ApprovalRule{}};
  EXPECT_EQ(requester.Answer("requester", true).code(), StatusCode::kPermissionDenied) << "a kind, not a name";
  Status other = requester.Answer("ben", true);
  EXPECT_EQ(other.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(other.message().find("the person who asked (ana)"), std::string::npos) << other.message();
  EXPECT_TRUE(requester.p.state.pending_approval) << "still pending";
  EXPECT_TRUE(requester.p.ctx.result.events.empty());
  EXPECT_TRUE(requester.Answer("ana", true).ok());
  EXPECT_FALSE(requester.p.state.pending_approval);

  ApprovalRule by_role;
  by_role.approvers = {"dr_lee", "role:pharmacist"};
  Paused pharmacist{by_role};
  EXPECT_EQ(pharmacist.Answer("ana", true).code(), StatusCode::kPermissionDenied) << "the requester is not listed";
  EXPECT_EQ(pharmacist.Answer("role:pharmacist", true).code(), StatusCode::kPermissionDenied)
      << "a role is a key's, never a name a body claims";
  ASSERT_TRUE(pharmacist.Answer("someone", true, {"pharmacist"}).ok());
  EXPECT_EQ(pharmacist.Event("approval.granted")["as"], "role:pharmacist");
}

TEST(AnswerApprovalTest, AnEditIsAShallowMergeAndOnlyWhereTheRuleAllowsIt) {
  ApprovalAnswer fewer;
  fewer.decision = true;
  fewer.args = {{"quantity", 60}};
  Paused fixed{ApprovalRule{}};
  EXPECT_EQ(fixed.Answer("ana", fewer).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(fixed.p.state.pending_approval);

  ApprovalRule editable;
  editable.allow_edit = true;
  Paused edited{editable};
  fewer.message = "60 is enough";
  ASSERT_TRUE(edited.Answer("ana", fewer).ok());
  EXPECT_EQ(edited.p.ctx.decisions().approved_args, Json({{"drug", "metformin"}, {"quantity", 60}}));
  Json granted = edited.Event("approval.granted");
  EXPECT_EQ(granted["args"]["quantity"], 120);
  EXPECT_EQ(granted["approved_args"]["quantity"], 60);
  EXPECT_EQ(granted["message"], "60 is enough");
  EXPECT_EQ(granted["by"], "ana");
}

TEST(AnswerApprovalTest, AlwaysIsForARuleThatAllowsItAndNeverForOutsideData) {
  ApprovalAnswer always;
  always.decision = true;
  always.remember = true;
  Paused once{ApprovalRule{}};
  EXPECT_EQ(once.Answer("ana", always).code(), StatusCode::kInvalidArgument);

  ApprovalRule session;
  session.remember = RememberScope::kSession;
  Paused steered{session, ApprovalReason::kUntrustedData};
  Status refused = steered.Answer("ana", always);
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("I8"), std::string::npos);

  Paused remembered{session};
  ASSERT_TRUE(remembered.Answer("ana", always).ok());
  EXPECT_EQ(remembered.Event("approval.remembered")["tool"], "refill");
  std::optional<StandingPermission> p = FindStandingPermission(remembered.p.state, "refill");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->by, "ana");
  EXPECT_TRUE(RevokeStandingPermission(remembered.p.state, "refill"));
  EXPECT_FALSE(RevokeStandingPermission(remembered.p.state, "refill"));
  EXPECT_TRUE(StandingPermissions(remembered.p.state).empty());
}

TEST(LapseApprovalTest, AnApprovalPastItsTtlIsWithdrawnAndThePersonToldInTheRulesWords) {
  ApprovalRule rule;
  rule.ttl_s = 900;
  rule.prompt = "Refill {drug}?";
  Paused waiting{rule};
  waiting.p.state.pending_approval->prompt = "Refill metformin?";
  waiting.p.clock.Advance(899'999);
  EXPECT_FALSE(LapseApproval(waiting.p.ctx));
  EXPECT_TRUE(waiting.p.state.pending_approval);
  waiting.p.clock.Advance(1);
  std::optional<std::string> note = LapseApproval(waiting.p.ctx);
  ASSERT_TRUE(note);
  EXPECT_EQ(*note,
            "I did not go ahead (\u201cRefill metformin?\u201d): the approval lapsed after 15 minutes without an "
            "answer. Ask again if you still want it.");
  EXPECT_FALSE(waiting.p.state.pending_approval);
  EXPECT_EQ(waiting.p.ctx.decisions().lapsed_approval_id, "a_1");
  EXPECT_EQ(waiting.Event("approval.lapsed")["tool"], "refill");

  Paused forever{ApprovalRule{}};
  forever.p.clock.Advance(365LL * 86400 * 1000);
  EXPECT_FALSE(LapseApproval(forever.p.ctx)) << "no ttl_s: it waits";
}

}  // namespace
}  // namespace reins
