// ActNotDescribe: when a text answer describes an unmade call the loop gets one forced
// retry; what is still described but not done when the reply is final is taken out and
// said plainly; a write nobody asked for is never forced.
#include <gtest/gtest.h>

#include "policy/act/act_not_describe.h"
#include "support/policy_context.h"

namespace reins {
namespace {

std::vector<ToolDef> ContactsAndMessages() {
  ToolDef lookup;
  lookup.name = "lookup_contacts";
  lookup.title = "contact lookup";
  lookup.description = "Finds the user's contacts by name.";
  lookup.annotations = {{"readOnlyHint", true}};
  ToolDef send;
  send.name = "send_message";
  send.title = "message sending";
  send.description = "Sends a short text message to one contact, by contact id.";
  return {lookup, send};
}

class ActPolicyTest : public ::testing::Test {
 protected:
  ActPolicyTest() : p_(ContactsAndMessages()), ctx_(p_.ctx), policy_(p_.config, Json::object()) {
    p_.config.max_rounds = 6;
  }
  // The model answered `text` in this turn.
  void Answered(const std::string& user, const std::string& text) {
    ctx_.input.say = user;
    p_.history.Append(Message::User(user));
    p_.history.Append(Message::Assistant(text));
  }
  void Ran(const std::string& tool) {
    ToolOutcome o;
    o.name = tool;
    o.status = ToolOutcome::Status::kExecuted;
    o.result = ResultEnvelope{};
    ctx_.result.tools.push_back(o);
  }
  int Events(std::string_view type) const {
    int n = 0;
    for (const TraceEvent& e : ctx_.result.events) n += EventTypeName(e.type) == type ? 1 : 0;
    return n;
  }

  testing::PolicyContext p_;
  TurnContext& ctx_;
  ActNotDescribe policy_;
};

TEST_F(ActPolicyTest, ADescribedLookupIsForcedOncePerTurn) {
  Answered("Text John that I'm late", "I'll use lookup_contacts to find John.");
  EXPECT_EQ(policy_.RequiredToolMissing(ctx_), "lookup_contacts");
  EXPECT_EQ(Events("act.retry"), 1);
  // The forced retry described it again: no second retry (I9); the review says so.
  p_.history.Append(Message::Assistant("Let me look John up for you."));
  EXPECT_EQ(policy_.RequiredToolMissing(ctx_), std::nullopt);
  std::string reply = "Sure! Let me look John up for you.";
  ASSERT_TRUE(policy_.ReviewReply(ctx_, reply));
  EXPECT_EQ(reply, "Sure! I was not able to complete the contact lookup just now, so it has not been done. Please ask again.");
  ASSERT_EQ(Events("act.missing"), 1);
  EXPECT_EQ(ctx_.result.events.back().data.json()["reason"], "retried");
}

TEST_F(ActPolicyTest, AWriteIsForcedOnlyWhenThePersonAskedForIt) {
  Answered("What's Jane's email?", "Her email is jane@example.com. I also sent her a quick note saying you'd be in touch!");
  EXPECT_EQ(policy_.RequiredToolMissing(ctx_), std::nullopt);  // honest_claims' case, not a call to make
  Answered("Text Jane that dinner is at 7", "Done, I've texted Jane that dinner's at 7!");
  EXPECT_EQ(policy_.RequiredToolMissing(ctx_), "send_message");
}

TEST_F(ActPolicyTest, QuestionsOffersNegationsAndCallsThatRanAreNotUnmadeCalls) {
  for (const char* text : {"Which John did you mean?", "I can send it once you confirm the wording.",
                           "Would you like me to text him?", "I won't send anything until you say so.",
                           "I'll remember that Jane prefers texts."}) {
    Answered("Text John that I'm late", text);
    EXPECT_EQ(policy_.RequiredToolMissing(ctx_), std::nullopt) << text;
  }
  Ran("send_message");
  Answered("Text John that I'm late", "I've sent John your message.");
  EXPECT_EQ(policy_.RequiredToolMissing(ctx_), std::nullopt);
  std::string reply = "I've sent John your message.";
  EXPECT_FALSE(policy_.ReviewReply(ctx_, reply));
  EXPECT_EQ(Events("act.retry"), 0);
}

TEST_F(ActPolicyTest, AGenericClaimWhenNothingRanIsNeverDeliveredAsDone) {
  Answered("Can you help me?", "I've taken care of that for you.");
  EXPECT_EQ(policy_.RequiredToolMissing(ctx_), std::nullopt);  // no tool the request names
  std::string reply = "Thanks for asking! I've taken care of that for you.";
  ASSERT_TRUE(policy_.ReviewReply(ctx_, reply));
  EXPECT_EQ(reply, "Thanks for asking! I was not able to complete the request just now, so it has not been done. Please ask again.");
  Ran("lookup_contacts");
  std::string after_a_lookup = "I've taken care of that for you.";
  EXPECT_FALSE(policy_.ReviewReply(ctx_, after_a_lookup));  // something ran: which, the rails cannot tell
}

TEST_F(ActPolicyTest, NoRetryWhenTheLoopHasNoRoundLeft) {
  ctx_.loop_rounds = p_.config.max_rounds;
  Answered("Find John", "Let me look up John in your contacts.");
  EXPECT_EQ(policy_.RequiredToolMissing(ctx_), std::nullopt);
  std::string reply = "Let me look up John in your contacts.";
  ASSERT_TRUE(policy_.ReviewReply(ctx_, reply));
  EXPECT_EQ(ctx_.result.events.back().data.json()["reason"], "no_round_left");
}

TEST(ActionReaderTest, PicksTheFirstActionAndTheToolTheRequestIsAbout) {
  std::vector<ToolDef> tools = ContactsAndMessages();
  ActionReader reader(tools);
  EXPECT_EQ(reader.UnmadeCall("Message Chris that I'm late", "I'll look up Chris and send that over.", {})->tool,
            "lookup_contacts");
  std::optional<ActionTalk> generic = reader.UnmadeCall("Can you text Dave that the game is off?", "All set!", {});
  ASSERT_TRUE(generic);
  EXPECT_EQ(generic->tool, "send_message");
  EXPECT_EQ(generic->mode, ActionMode::kGeneric);
  // A claim pattern of the tool's own.
  tools[1].claims = {"(?i)\\bon (its|their) way\\b"};
  ActionReader with_claims(tools);
  EXPECT_EQ(with_claims.UnmadeCall("Send Lisa congrats", "Your congrats are on their way to Lisa!", {})->tool, "send_message");
  // "Don't send it yet": not asked for.
  EXPECT_EQ(reader.UnmadeCall("Don't send it yet, just find John", "I'll send John the message now.", {}), std::nullopt);
}

}  // namespace
}  // namespace reins
