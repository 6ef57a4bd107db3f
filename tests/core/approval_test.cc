// Human approval (I8): a tool with `approval: required` pauses the turn; only an
// explicit approval runs it, exactly as proposed; a pending approval holds the session.
#include <gtest/gtest.h>

#include "support/runtime_harness.h"

namespace reins {
namespace {

constexpr const char* kAgent = R"(name: hitl
model: { provider: scripted }
tools:
  - name: confirm
    approval: required
    input_schema: { type: object, properties: { action: { type: string } }, required: [action] }
)";

constexpr const char* kReplies = R"([
  {"when": {"turn": 1}, "tool_calls": [{"name": "confirm", "args": {"action": "delete files"}}]},
  {"when": {"last": "tool"}, "repeat": true, "text": "Done."}])";

class ApprovalTest : public testing::RuntimeHarness {
 protected:
  Result<TurnResult> Approve(bool yes) {
    TurnInput in;
    in.approve = yes;
    return Run(std::move(in));
  }
};

TEST_F(ApprovalTest, PausesThenRunsExactlyTheApprovedCall) {
  Build(kAgent, kReplies, {{"confirm", R"([{"result": {"success": true}}])"}});
  auto paused = Say("clean up");
  ASSERT_TRUE(paused.ok());
  EXPECT_EQ(paused->status, TurnStatus::kAwaitingApproval);
  ASSERT_TRUE(paused->approval.has_value());
  EXPECT_EQ(paused->approval->args, (Json{{"action", "delete files"}}));
  EXPECT_EQ(Calls("confirm"), 0);

  auto done = Approve(true);
  ASSERT_TRUE(done.ok()) << done.status().message();
  EXPECT_EQ(done->status, TurnStatus::kCompleted);
  EXPECT_EQ(Calls("confirm"), 1);
  size_t granted = 0, executed = 0;
  for (size_t i = 0; i < done->events.size(); ++i) {
    if (done->events[i].type == "approval.granted") granted = i + 1;
    if (done->events[i].type == "tool.executed") executed = i + 1;
  }
  EXPECT_GT(granted, 0u);
  EXPECT_GT(executed, granted);
  EXPECT_FALSE(Approve(true).ok());  // nothing pending any more
}

TEST_F(ApprovalTest, DenialNeverRunsTheCallAndTheModelIsTold) {
  Build(kAgent, kReplies, {{"confirm", R"([{"result": {"success": true}}])"}});
  ASSERT_TRUE(Say("clean up").ok());
  auto denied = Approve(false);
  ASSERT_TRUE(denied.ok());
  EXPECT_EQ(denied->status, TurnStatus::kCompleted);
  EXPECT_EQ(Calls("confirm"), 0);
  ASSERT_FALSE(denied->tools.empty());
  EXPECT_EQ(denied->tools[0].reason, "denied");
  const Message& last_tool = recorder_->requests.back().messages.back();
  EXPECT_TRUE(last_tool.is_error);
  EXPECT_NE(last_tool.text.find("denied by user"), std::string::npos);
}

TEST_F(ApprovalTest, APendingApprovalHoldsTheSession) {
  Build(kAgent, kReplies, {{"confirm", R"([{"result": {"success": true}}])"}});
  ASSERT_TRUE(Say("clean up").ok());
  size_t calls_before = recorder_->requests.size();
  auto other = Say("actually, what's the weather?");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(recorder_->requests.size(), calls_before);  // no model call
  EXPECT_TRUE(Approve(false).ok());                     // still answerable
}

}  // namespace
}  // namespace reins
