#include "policy/intents/intent_policy.h"

#include <gtest/gtest.h>

#include "support/policy_context.h"

namespace reins {
namespace {

TEST(IntentPolicyTest, ForcesTheFirstMissingToolOncePerTurn) {
  ToolDef prayer;
  prayer.name = "submit_prayer_request";
  testing::PolicyContext p({prayer});
  p.config.intents = {{"prayer", "(?i)\\bpray", {"submit_prayer_request"}, IntentEnforcement::kForce}};
  IntentPolicy policy(p.config);
  p.ctx.input.say = "Please pray for my dad";
  EXPECT_EQ(policy.RequiredToolMissing(p.ctx), "submit_prayer_request");
  EXPECT_FALSE(policy.RequiredToolMissing(p.ctx).has_value());  // one retry only (I9)
}

// A required tool withheld from the model (its MCP lock no longer matches) is recorded
// as missing but never forced: a tool choice outside the request's tools is a
// provider error. Another missing tool that is offered is forced instead.
TEST(IntentPolicyTest, NeverForcesAWithheldTool) {
  ToolDef refill;
  refill.name = "refill";
  refill.withheld = "its description changed since the lock was written";
  ToolDef note;
  note.name = "note";
  testing::PolicyContext p({refill, note});
  p.config.intents = {{"refill", "(?i)refill", {"refill"}, IntentEnforcement::kForce},
                      {"both", "(?i)refill", {"refill", "note"}, IntentEnforcement::kForce}};
  IntentPolicy policy(p.config);
  p.ctx.input.say = "Refill my prescription";
  EXPECT_EQ(policy.RequiredToolMissing(p.ctx), "note");
  ASSERT_EQ(p.ctx.result.events.size(), 2u);
  EXPECT_EQ(TraceEventToJson(p.ctx.result.events[0])["data"]["retry"], false);
  EXPECT_EQ(TraceEventToJson(p.ctx.result.events[1])["data"]["retry"], true);
}

TEST(IntentPolicyTest, SatisfiedByADeferredOrSuccessfulCallNotByAFailedOne) {
  ToolDef prayer;
  prayer.name = "submit_prayer_request";
  testing::PolicyContext p({prayer});
  ToolOutcome failed;
  failed.name = "submit_prayer_request";
  failed.result = ResultEnvelope::Failure("db down");
  p.ctx.result.tools = {failed};
  EXPECT_EQ(MissingTools(p.ctx.RequestTools(), {"submit_prayer_request"}).size(), 1u);
  ToolOutcome queued = failed;
  queued.status = ToolOutcome::Status::kDeferred;
  queued.result.reset();
  p.ctx.result.tools.push_back(queued);
  EXPECT_TRUE(MissingTools(p.ctx.RequestTools(), {"submit_prayer_request"}).empty());
}

TEST(IntentPolicyTest, AuditAndOffOnlyRecord) {
  ToolDef group;
  group.name = "find_small_group";
  testing::PolicyContext p({group});
  p.config.intents = {{"groups", "(?i)group", {"find_small_group"}, IntentEnforcement::kAudit}};
  IntentPolicy policy(p.config);
  p.ctx.input.say = "any small groups?";
  EXPECT_FALSE(policy.RequiredToolMissing(p.ctx).has_value());
  ASSERT_FALSE(p.ctx.result.events.empty());
  EXPECT_EQ(p.ctx.result.events.back().name(), "intent.missing");
  p.ctx.input.say = "what time is service?";
  size_t before = p.ctx.result.events.size();
  EXPECT_FALSE(policy.RequiredToolMissing(p.ctx).has_value());
  EXPECT_EQ(p.ctx.result.events.size(), before);  // no match, nothing recorded
}

}  // namespace
}  // namespace reins
