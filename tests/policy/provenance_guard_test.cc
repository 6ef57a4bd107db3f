#include "policy/provenance/provenance_guard.h"

#include <gtest/gtest.h>

#include "policy/clarify/clarify_truncation.h"
#include "policy/guards/call_shape_guard.h"
#include "support/policy_context.h"

namespace reins {
namespace {

std::vector<ToolDef> LookupAndSend() {
  ToolDef lookup;
  lookup.name = "lookup";
  lookup.may_clarify = true;
  lookup.produces["contact"] = "$.data.contacts[*].id";
  ToolDef send;
  send.name = "send";
  send.consumes["to"] = "contact";
  return {lookup, send};
}

class ProvenanceGuardTest : public ::testing::Test {
 protected:
  ProvenanceGuardTest() : p_(LookupAndSend()), config_(p_.config), state_(p_.state), ctx_(p_.ctx) {}

  CallVerdict GuardSend(const Json& to) {
    ToolCall call;
    call.name = "send";
    call.args = {{"to", to}};
    ProvenanceGuard guard(config_);
    return guard.Guard(ctx_, {&call, config_.FindTool("send"), 0, false});
  }

  void ObserveLookup(const std::string& result_json) {
    ToolCall call;
    call.name = "lookup";
    ProvenanceGuard guard(config_);
    guard.Observe(ctx_, {&call, config_.FindTool("lookup"), 0, false}, NormaliseToolResult(Json::parse(result_json)));
  }

  testing::PolicyContext p_;
  AgentConfig& config_;
  SessionState& state_;
  TurnContext& ctx_;
};

TEST_F(ProvenanceGuardTest, RefusesAnIdNoToolProduced) {
  CallVerdict v = GuardSend("u_ghost");
  EXPECT_EQ(v.kind, CallVerdict::Kind::kReject);
  EXPECT_EQ(v.reason, "provenance");
  EXPECT_NE(v.message.find("Call lookup"), std::string::npos) << v.message;
}

TEST_F(ProvenanceGuardTest, AcceptsAnIdAnEarlierResultProduced) {
  ObserveLookup(R"({"data": {"contacts": [{"id": "u_jane"}]}})");
  EXPECT_EQ(GuardSend("u_jane").kind, CallVerdict::Kind::kContinue);
  EXPECT_EQ(GuardSend("u_john").kind, CallVerdict::Kind::kReject);
}

TEST_F(ProvenanceGuardTest, FailedResultsProduceNothing) {
  ObserveLookup(R"({"success": false, "data": {"contacts": [{"id": "u_jane"}]}})");
  EXPECT_EQ(GuardSend("u_jane").kind, CallVerdict::Kind::kReject);
}

TEST_F(ProvenanceGuardTest, AfterAChoiceOnlyTheChosenIdPassesForThatTurn) {
  ObserveLookup(R"({"data": {"contacts": [{"id": "u_doe"}, {"id": "u_smith"}]}})");
  PendingClarification pending;
  pending.entity_type = "contact";
  ProvenanceGuard(config_).OnClarificationAnswered(ctx_, pending, "u_doe");
  EXPECT_EQ(GuardSend("u_doe").kind, CallVerdict::Kind::kContinue);
  CallVerdict other = GuardSend("u_smith");
  EXPECT_EQ(other.kind, CallVerdict::Kind::kReject);
  EXPECT_NE(other.message.find("the user chose contact 'u_doe'"), std::string::npos) << other.message;
  ctx_.result.turn_number = 2;  // a later request: both Johns were produced, either may be meant
  EXPECT_EQ(GuardSend("u_smith").kind, CallVerdict::Kind::kContinue);
}

TEST_F(ProvenanceGuardTest, NonStringIdsAreRefused) {
  EXPECT_EQ(GuardSend(Json::object()).kind, CallVerdict::Kind::kReject);
}

TEST_F(ProvenanceGuardTest, LedgerRoundTripsThroughJson) {
  ObserveLookup(R"({"data": {"contacts": [{"id": "u_doe"}, {"id": 42}]}})");
  state_.entities.Choose("contact", "u_doe", 3);
  EntityLedger copy = EntityLedger::FromJson(state_.entities.ToJson());
  EXPECT_TRUE(copy.WasProduced("contact", "42"));
  EXPECT_EQ(copy.ChosenFor("contact", 3), "u_doe");
  EXPECT_FALSE(copy.ChosenFor("contact", 4).has_value());
}

TEST(ClarifyTruncationTest, CallsAfterAMayClarifyToolAreTruncated) {
  ToolDef lookup, send;
  lookup.name = "lookup";
  lookup.may_clarify = true;
  send.name = "send";
  ToolCall a, b, c;
  std::vector<ProposedCall> calls = {{&a, &send, 0, false}, {&b, &lookup, 1, false}, {&c, &send, 2, false}};
  testing::PolicyContext p;
  ClarifyTruncation().ShapeCalls(p.ctx, calls);
  EXPECT_FALSE(calls[0].truncated);
  EXPECT_FALSE(calls[1].truncated);
  EXPECT_TRUE(calls[2].truncated);
}

TEST(CallShapeGuardTest, RefusesUnknownToolsAndNonObjectArguments) {
  ToolDef send;
  send.name = "send";
  testing::PolicyContext p({send});
  TurnContext& ctx = p.ctx;
  CallShapeGuard guard;
  ToolCall unknown;
  unknown.name = "send_sms";
  CallVerdict v = guard.Guard(ctx, {&unknown, nullptr, 0, false});
  EXPECT_EQ(v.reason, "unknown_tool");
  EXPECT_NE(v.message.find("send"), std::string::npos);
  ToolCall broken;
  broken.name = "send";
  broken.args_valid = false;
  broken.arguments_text = "{\"to\": ";
  EXPECT_EQ(guard.Guard(ctx, {&broken, &send, 0, false}).reason, "invalid_json");
  ToolCall list;
  list.name = "send";
  list.args = Json::array();
  EXPECT_EQ(guard.Guard(ctx, {&list, &send, 0, false}).reason, "invalid_json");
  ToolCall good;
  good.name = "send";
  EXPECT_EQ(guard.Guard(ctx, {&good, &send, 0, false}).kind, CallVerdict::Kind::kContinue);
}

// An MCP tool the agent's lock no longer matches is, to the model, a tool it was not
// given: refused as `withheld`, and left out of the names the model is told to use.
TEST(CallShapeGuardTest, RefusesAWithheldToolWithoutNamingIt) {
  ToolDef send;
  send.name = "send";
  ToolDef wipe;
  wipe.name = "wipe";
  wipe.withheld = "its description changed since the lock was written";
  testing::PolicyContext p({send, wipe});
  CallShapeGuard guard;
  ToolCall call;
  call.name = "wipe";
  CallVerdict v = guard.Guard(p.ctx, {&call, p.config.FindTool("wipe"), 0, false});
  EXPECT_EQ(v.kind, CallVerdict::Kind::kReject);
  EXPECT_EQ(v.reason, "withheld");
  EXPECT_EQ(v.message, "there is no tool named 'wipe'. Use only the tools you were given: send.");
}

}  // namespace
}  // namespace reins
