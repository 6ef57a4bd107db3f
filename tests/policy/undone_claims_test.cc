// UndoneClaims (policy/act/undone_claims.h, I5): after a call was refused, skipped,
// withdrawn, denied, failed or left uncertain, no sentence of the reply announces,
// reports or promises its action, and the reply says once what was not done. The first
// cases are the replies a pharmacy patient got after a refused refill (issue 73).
#include <gtest/gtest.h>

#include "config/agent_config_loader.h"
#include "policy/act/undone_claims.h"
#include "support/policy_context.h"

namespace reins {
namespace {

class UndoneClaimsTest : public ::testing::Test {
 protected:
  UndoneClaimsTest() {
    Result<AgentConfig> config = LoadAgentConfigFile(std::string(REINS_SOURCE_DIR) + "/examples/pharmacy/agent.yaml");
    EXPECT_TRUE(config.ok()) << config.status().message();
    p_.config = std::move(*config);
    p_.ctx.input.say = "Can you refill my atorvastatin?";
  }
  void Call(const std::string& tool, ToolOutcome::Status status, const std::string& reason, const Json& args = {},
            bool success = true) {
    ToolOutcome o;
    o.name = tool;
    o.status = status;
    o.reason = reason;
    o.args = args.is_null() ? Json::object() : args;
    if (status == ToolOutcome::Status::kExecuted) o.result = success ? ResultEnvelope{} : ResultEnvelope::Failure("down");
    p_.ctx.result.tools.push_back(o);
  }
  std::string Review(std::string reply) {
    UndoneClaims rail(p_.config);
    rail.ReviewReply(p_.ctx, reply);
    return reply;
  }
  testing::PolicyContext p_;
};

TEST_F(UndoneClaimsTest, TheRepliesAPatientGotAfterARefusedRefillClaimNothing) {
  Call("request_refill", ToolOutcome::Status::kRejected, "provenance", {{"drug", "atorvastatin"}});
  const std::string statement = "I was not able to complete the refill request just now, so it has not been done.";
  // Present progressive.
  EXPECT_EQ(Review("Thank you. I'm sending the refill request for your atorvastatin now."), "Thank you. " + statement);
  // Result state and future: the model's own "not able" already says it, once.
  EXPECT_EQ(Review("The pharmacy has your refill and it will be ready today. I was not able to complete the request "
                   "just now."),
            "I was not able to complete the request just now.");
  // Perfect.
  EXPECT_EQ(Review("I've put in the refill for your atorvastatin."), statement);
  EXPECT_EQ(Review("Your refill will be ready for pickup tomorrow. Anything else?"), "Anything else? " + statement);
  // No claim: nothing to take out, nothing added (the model may be asking to repair it).
  EXPECT_EQ(Review("Which prescription did you mean?"), "Which prescription did you mean?");
}

TEST_F(UndoneClaimsTest, EveryWayACallDoesNotHappenCounts) {
  const std::string claim = "I've put in the refill for your atorvastatin.";
  struct Case {
    ToolOutcome::Status status;
    std::string reason;
    bool success;
    std::string told;
  };
  const std::string not_done = "I was not able to complete the refill request just now, so it has not been done.";
  for (const Case& c : {Case{ToolOutcome::Status::kRejected, "schema", true, not_done},
                        Case{ToolOutcome::Status::kRejected, "untrusted_data", true, not_done},
                        Case{ToolOutcome::Status::kRejected, "denied", true, "The refill request was not done: it was not approved."},
                        Case{ToolOutcome::Status::kSkipped, "chain_stopped", true, not_done},
                        Case{ToolOutcome::Status::kSkipped, "turn_timeout", true, not_done},
                        Case{ToolOutcome::Status::kSkipped, "turn_failed", true, not_done},
                        Case{ToolOutcome::Status::kExecuted, "", false, not_done},
                        // Uncertain: the runtime's own note follows (it may have happened).
                        Case{ToolOutcome::Status::kSkipped, "uncertain", true, ""}}) {
    p_.ctx.result.tools.clear();
    Call("request_refill", c.status, c.reason, {{"drug", "atorvastatin"}}, c.success);
    EXPECT_EQ(Review(claim), c.told) << c.reason;
  }
  // Waiting for the person (an approval, a question) is not undone: the reply is the question.
  p_.ctx.result.tools.clear();
  Call("request_refill", ToolOutcome::Status::kSkipped, "awaiting_approval");
  EXPECT_EQ(Review(claim), claim);
}

TEST_F(UndoneClaimsTest, ARefusalTheModelRepairedIsNotUndone) {
  Call("request_refill", ToolOutcome::Status::kRejected, "schema", {{"quantity", 500}});
  Call("request_refill", ToolOutcome::Status::kDeferred, "", {{"quantity", 60}});
  EXPECT_EQ(Review("I've put in the refill for 60 units."), "I've put in the refill for 60 units.");
}

// Per call, by its object: the note that was written stays, the one that was denied goes.
TEST_F(UndoneClaimsTest, ClaimsAreJudgedPerCallByWhatTheyName) {
  p_.ctx.input.say = "Leave a note for Maria Garcia and one for James Okafor";
  Call("add_pharmacist_note", ToolOutcome::Status::kExecuted, "", {{"patient_id", "p_2001"}, {"note", "James Okafor: call back"}});
  Call("add_pharmacist_note", ToolOutcome::Status::kRejected, "denied",
       {{"patient_id", "p_4471"}, {"note", "Maria Garcia: dosage question"}});
  EXPECT_EQ(Review("I left the pharmacist a note for James Okafor. I also left a note for Maria Garcia."),
            "I left the pharmacist a note for James Okafor. The note to the pharmacist was not done: it was not approved.");
  // Naming neither call: it may be about the one that ran; the denied one is still said.
  EXPECT_EQ(Review("I left the pharmacist a note."), "I left the pharmacist a note.");
}

TEST_F(UndoneClaimsTest, AStreamedClaimIsNotSentAndTheStatementFollows) {
  Call("request_refill", ToolOutcome::Status::kRejected, "provenance", {{"drug", "atorvastatin"}});
  UndoneClaims rail(p_.config);
  std::string first = "Thank you.";
  EXPECT_FALSE(rail.ReviewSentence(p_.ctx, "", first));
  std::string claim = " I'm sending the refill request for your atorvastatin now.";
  ASSERT_TRUE(rail.ReviewSentence(p_.ctx, "Thank you.", claim));
  EXPECT_TRUE(claim.empty()) << "never sent";
  std::string tail;
  ASSERT_TRUE(rail.CloseReply(p_.ctx, "Thank you.", tail));
  EXPECT_EQ(tail, " I was not able to complete the refill request just now, so it has not been done.");
}

TEST_F(UndoneClaimsTest, WithoutClaimsOfLeavesNoSpaceBehind) {
  ActionReader reader(p_.config.tools);
  EXPECT_EQ(WithoutClaimsOf(reader, "Refill my atorvastatin", "  I've put in the refill.  Have a good day! ", {{"request_refill", Json::object()}}, {}),
            "Have a good day!");
  EXPECT_EQ(WithoutClaimsOf(reader, "Refill my atorvastatin", "I've put in the refill.", {{"request_refill", Json::object()}}, {}), "");
}

}  // namespace
}  // namespace reins
