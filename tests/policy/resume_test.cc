// Policy::Resume: a turn that answers what a policy paused goes on as that policy says.
// Approval: the decided call, exactly as proposed, runs (and only it passes the guard)
// or is refused. Clarification: a note naming the choice, or, for a question a call
// asked mid-call whose backend holds the call open, that call with the answer.
#include <gtest/gtest.h>

#include "policy/approval/approval_policy.h"
#include "policy/clarify/clarification_answer.h"
#include "support/policy_context.h"

namespace reins {
namespace {

ToolDef SendTool() {
  ToolDef t;
  t.name = "send_message";
  t.title = "Send a message";
  t.approval.required = true;
  return t;
}

TEST(ApprovalResumeTest, AGrantedApprovalRunsExactlyTheDecidedCall) {
  testing::PolicyContext p({SendTool()});
  ApprovalPolicy approval(p.config);
  p.ctx.decide().decided_approval =
      std::make_unique<PendingApproval>(PendingApproval{"a_1", "send_message", Json{{"to", "u1"}}, "send it", {}});
  p.ctx.decide().approval_answer = true;
  std::optional<Resumption> r = approval.Resume(p.ctx);
  ASSERT_TRUE(r && r->call);
  EXPECT_FALSE(r->denied);
  EXPECT_EQ(r->call->name, "send_message");
  EXPECT_EQ(r->call->args, (Json{{"to", "u1"}}));
  EXPECT_NE(r->note.find("approved"), std::string::npos);

  const ToolDef* tool = p.ctx.FindTool("send_message");
  EXPECT_EQ(approval.Guard(p.ctx, {&*r->call, tool, 0, false}).kind, CallVerdict::Kind::kContinue);
  ToolCall other{"c_2", "send_message", "{}", Json{{"to", "u2"}}, true};
  EXPECT_EQ(approval.Guard(p.ctx, {&other, tool, 1, false}).kind, CallVerdict::Kind::kPause)
      << "the approval covers one call, not the tool";
}

TEST(ApprovalResumeTest, ADeniedApprovalRefusesTheCallAndLetsNothingThrough) {
  testing::PolicyContext p({SendTool()});
  ApprovalPolicy approval(p.config);
  p.ctx.decide().decided_approval =
      std::make_unique<PendingApproval>(PendingApproval{"a_1", "send_message", Json{{"to", "u1"}}, "send it", {}});
  std::optional<Resumption> r = approval.Resume(p.ctx);
  ASSERT_TRUE(r && r->call);
  EXPECT_TRUE(r->denied);
  EXPECT_EQ(approval.Guard(p.ctx, {&*r->call, p.ctx.FindTool("send_message"), 0, false}).kind,
            CallVerdict::Kind::kPause);
}

TEST(ApprovalResumeTest, NothingToResumeWithoutADecision) {
  testing::PolicyContext p({SendTool()});
  EXPECT_FALSE(ApprovalPolicy(p.config).Resume(p.ctx));
  EXPECT_FALSE(ClarificationAnswer().Resume(p.ctx));
}

PendingClarification Question(const std::string& type) {
  PendingClarification asked;
  asked.id = "cl_1";
  asked.tool = "book_room";
  asked.clarification.type = type;
  asked.clarification.question = "Which room?";
  ClarificationOption option;
  option.id = "r2";
  option.title = "Room 2";
  option.metadata = {{"elicitation", {{"field", "room"}, {"value", "r2"}}}, {"resume_args", {{"day", "mon"}}}};
  asked.clarification.options.push_back(option);
  return asked;
}

TEST(ClarificationResumeTest, AChoiceBecomesANoteNamingTheOption) {
  testing::PolicyContext p;
  p.ctx.decide().answered = std::make_unique<PendingClarification>(Question("select_one"));
  p.ctx.decide().chosen_option_id = "r2";
  std::optional<Resumption> r = ClarificationAnswer().Resume(p.ctx);
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->call);
  EXPECT_NE(r->note.find("\"Room 2\" (id r2)"), std::string::npos) << r->note;
}

TEST(ClarificationResumeTest, AQuestionAskedMidCallResumesThatCallWithTheAnswer) {
  testing::PolicyContext p;
  p.ctx.decide().answered = std::make_unique<PendingClarification>(Question("elicitation"));
  p.ctx.decide().chosen_option_id = "r2";
  const TurnContext::ResumesQuestions resumes = [](const std::string& tool) { return tool == "book_room"; };
  p.ctx.resumes_questions = &resumes;
  std::optional<Resumption> r = ClarificationAnswer().Resume(p.ctx);
  ASSERT_TRUE(r && r->call);
  EXPECT_EQ(r->call->name, "book_room");
  EXPECT_EQ(r->call->args, (Json{{"day", "mon"}}));
  EXPECT_EQ(r->answer, (Json{{"room", "r2"}}));
  EXPECT_FALSE(r->denied);
}

TEST(ClarificationResumeTest, ABackendThatCannotHoldTheCallGetsTheModelAskedAgain) {
  testing::PolicyContext p;
  p.ctx.decide().answered = std::make_unique<PendingClarification>(Question("elicitation"));
  p.ctx.decide().chosen_option_id = "r2";
  const TurnContext::ResumesQuestions resumes = [](const std::string&) { return false; };
  p.ctx.resumes_questions = &resumes;
  std::optional<Resumption> r = ClarificationAnswer().Resume(p.ctx);
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->call) << "a tool that only claims to have asked mid-call is not resumed";
}

}  // namespace
}  // namespace reins
