#include <gtest/gtest.h>

#include "policy/act/undone_claims.h"
#include "policy/rails/empathy_first.h"
#include "policy/rails/honest_claims.h"
#include "policy/rails/no_internal_names.h"
#include "policy/rails/rail_text.h"
#include "policy/safety/safety_override.h"
#include "support/policy_context.h"

namespace reins {
namespace {

std::vector<ToolDef> PrayerAndBooking() {
  ToolDef prayer;
  prayer.name = "submit_prayer_request";
  prayer.title = "prayer request";
  ToolDef booking;
  booking.name = "book_appointment";
  booking.title = "appointment booking";
  return {prayer, booking};
}

class RailsTest : public ::testing::Test {
 protected:
  RailsTest() : p_(PrayerAndBooking()), config_(p_.config), ctx_(p_.ctx) {}
  void Outcome(const std::string& tool, ToolOutcome::Status status, bool success) {
    ToolOutcome o;
    o.name = tool;
    o.status = status;
    if (status == ToolOutcome::Status::kExecuted) o.result = success ? ResultEnvelope{} : ResultEnvelope::Failure("x");
    ctx_.result.tools.push_back(o);
  }

  testing::PolicyContext p_;
  AgentConfig& config_;
  TurnContext& ctx_;
};

Json EmpathyConfig() {
  return Json::parse(R"J({"emotional_patterns": ["(?i)\\b(pray|scared|loss)"],
                          "result_opener_patterns": ["(?i)^(your )?prayer request.{0,20}(submitted|saved)"],
                          "openers": ["I'm so sorry.", "That sounds so hard."]})J");
}

TEST_F(RailsTest, EmpathyFirstPrependsAnOpenerOnlyWhenBothPatternsMatch) {
  EmpathyFirst rail(EmpathyConfig());
  ctx_.input.say = "I'm scared, please pray";
  std::string reply = "Your prayer request has been submitted.";
  ASSERT_TRUE(rail.ReviewReply(ctx_, reply));
  EXPECT_TRUE(reply.rfind("I'm so sorry. ", 0) == 0 || reply.rfind("That sounds so hard. ", 0) == 0) << reply;
  EXPECT_NE(reply.find("Your prayer request has been submitted."), std::string::npos);

  std::string again = "Your prayer request has been submitted.";
  rail.ReviewReply(ctx_, again);
  EXPECT_EQ(again, reply);  // deterministic: same message, same opener

  std::string empathic = "I'm sorry you're scared. Your prayer request has been submitted.";
  EXPECT_FALSE(rail.ReviewReply(ctx_, empathic));
  ctx_.input.say = "What time is service?";
  std::string informational = "Your prayer request has been submitted.";
  EXPECT_FALSE(rail.ReviewReply(ctx_, informational));
}

// Seed 000's HEAR cases: the first sentence is judged by what it does, whatever words
// the configured patterns list; openers can be chosen by what the person said.
TEST_F(RailsTest, EmpathyFirstJudgesTheFirstSentenceByWhatItDoes) {
  EmpathyFirst rail(Json::parse(R"J({"openers": [{"match": "(?i)passed away|died", "text": "I'm so sorry for your loss."},
                                                 "I'm so sorry you're going through this."]})J"));
  ctx_.input.say = "My husband passed away last week. Could someone pray for our family?";
  for (const char* reports : {"I've asked the pastoral team to visit you this week.",
                              "Your prayer request has been submitted to the team.",
                              "The prayer team will be praying for you.", "Let me add this to our prayer list.",
                              "Here are three grief groups that meet nearby.", "Done! The team has your request.",
                              "I was not able to complete the prayer request just now."}) {
    std::string reply = reports;
    ASSERT_TRUE(rail.ReviewReply(ctx_, reply)) << reports;
    EXPECT_EQ(reply, std::string("I'm so sorry for your loss. ") + reports);
  }
  for (const char* acknowledges : {"I'm so sorry for your loss. I've asked the team to pray.",
                                   "That sounds incredibly hard. Your request is in.",
                                   "Thank you for telling me about Tom. The team will pray.",
                                   "Losing him must be so painful. I've passed this on."}) {
    std::string reply = acknowledges;
    EXPECT_FALSE(rail.ReviewReply(ctx_, reply)) << acknowledges;
  }
  ctx_.input.say = "I'm scared about my surgery tomorrow";
  std::string reply = "I've shared this with the care team.";
  ASSERT_TRUE(rail.ReviewReply(ctx_, reply));
  EXPECT_EQ(reply, "I'm so sorry you're going through this. I've shared this with the care team.");
  ctx_.input.say = "What time is the Sunday service?";
  std::string info = "Here are the service times: 9 and 11.";
  EXPECT_FALSE(rail.ReviewReply(ctx_, info));  // nothing emotional: left alone
}

TEST_F(RailsTest, NoInternalNamesUsesTitlesForWholeNamesOnly) {
  NoInternalNames rail(config_);
  std::string reply = "I used `submit_prayer_request` and book_appointment; submit_prayer_requests is another word.";
  ASSERT_TRUE(rail.ReviewReply(ctx_, reply));
  EXPECT_EQ(reply, "I used prayer request and appointment booking; submit_prayer_requests is another word.");
  std::string clean = "Nothing internal here.";
  EXPECT_FALSE(rail.ReviewReply(ctx_, clean));
}

TEST_F(RailsTest, HonestClaimsCorrectsClaimsOfActionsThatDidNotSucceed) {
  HonestClaims rail(config_, Json::object());
  std::string reply = "I've booked your appointment for Tuesday. See you then!";
  ASSERT_TRUE(rail.ReviewReply(ctx_, reply));  // never called: the claim goes, the correction takes its place
  EXPECT_EQ(reply, "See you then! I was not able to complete the appointment booking just now. Please try again or "
                   "contact us directly.");

  Outcome("book_appointment", ToolOutcome::Status::kExecuted, true);
  std::string ok = "I've booked your appointment for Tuesday.";
  EXPECT_FALSE(rail.ReviewReply(ctx_, ok));  // it did succeed

  Outcome("submit_prayer_request", ToolOutcome::Status::kDeferred, true);
  std::string pending = "Your prayer request has been submitted.";
  EXPECT_FALSE(rail.ReviewReply(ctx_, pending));  // pending in the outbox: the failure note's job

  // Called and failed: UndoneClaims' to tell (always on), not this rail's.
  ctx_.result.tools.clear();
  Outcome("book_appointment", ToolOutcome::Status::kExecuted, false);
  std::string failed = "Your appointment is scheduled.";
  EXPECT_FALSE(rail.ReviewReply(ctx_, failed));
  UndoneClaims undone(config_);
  ASSERT_TRUE(undone.ReviewReply(ctx_, failed));
  EXPECT_EQ(failed, "I was not able to complete the appointment booking just now, so it has not been done.");
}

// One claim, one tool: the sentence is about the tool it names most clearly, not every
// tool sharing a word with it (found by reins fuzz/eval with the simulated model).
TEST(HonestClaimsTest, CorrectsOnlyTheToolTheClaimIsAbout) {
  ToolDef visit;
  visit.name = "request_visit";
  visit.title = "pastoral visit";
  ToolDef contact;
  contact.name = "save_contact_info";
  contact.title = "visitor contact";
  testing::PolicyContext p({visit, contact});
  HonestClaims rail(p.config, Json::object());
  std::string reply = "I've saved your visitor contact details.";
  ASSERT_TRUE(rail.ReviewReply(p.ctx, reply));
  EXPECT_NE(reply.find("complete the visitor contact"), std::string::npos) << reply;
  EXPECT_EQ(reply.find("pastoral visit"), std::string::npos) << reply;
}

TEST_F(RailsTest, HonestClaimsUsesConfiguredWordsAndCorrection) {
  HonestClaims rail(config_, Json::parse(R"J({"claim_patterns": ["(?i)all set"], "correction": "[{title} failed]"})J"));
  std::string reply = "Your appointment is all set.";
  ASSERT_TRUE(rail.ReviewReply(ctx_, reply));
  EXPECT_EQ(reply, "[appointment booking failed]");
}

TEST(RailTextTest, SentencesAndHashAreStable) {
  EXPECT_EQ(Sentences("One. Two! Three?\nFour"), (std::vector<std::string>{"One.", " Two!", " Three?", "\n", "Four"}));
  EXPECT_EQ(Sentences("A. B").size(), 2u);
  EXPECT_EQ(StableHash("abc"), StableHash("abc"));
  EXPECT_NE(StableHash("abc"), StableHash("abd"));
}

TEST(SafetyOverrideTest, FlagToolGetsTheTextUnderItsTextLikeProperty) {
  ToolDef flag;
  flag.name = "flag";
  flag.input_schema = Json::parse(R"({"type": "object", "properties": {"message": {"type": "string"}}})");
  EXPECT_EQ(FlagToolArgs(flag, "help"), (Json{{"message", "help"}}));
  flag.input_schema = Json::parse(R"({"type": "object", "properties": {"note": {"type": "string"}}, "required": ["note"]})");
  EXPECT_EQ(FlagToolArgs(flag, "help"), (Json{{"note", "help"}}));
  flag.input_schema = Json::parse(R"({"type": "object"})");
  EXPECT_EQ(FlagToolArgs(flag, "help"), (Json{{"text", "help"}}));
}

}  // namespace
}  // namespace reins

#include "policy/rails/ui_allowlist.h"

namespace reins {
namespace {

// A streamed reply meets the rails one sentence at a time (docs/streaming.md): the
// opener only in front of the reply's first sentence, names in any sentence, a
// sentence pointing off the screen never sent and the reply ending by saying so.
TEST_F(RailsTest, OnAStreamedReplyEachRailJudgesItsSentencesAndOnlyAppends) {
  EmpathyFirst empathy(EmpathyConfig());
  ctx_.input.say = "I'm scared, please pray";
  std::string first = "Your prayer request has been submitted.";
  ASSERT_TRUE(empathy.ReviewSentence(ctx_, "", first));
  EXPECT_NE(first.find(" Your prayer request has been submitted."), std::string::npos) << first;
  std::string later = " Your prayer request has been submitted.";
  EXPECT_FALSE(empathy.ReviewSentence(ctx_, "I'm so sorry.", later)) << "only the reply's first sentence";

  NoInternalNames names(config_);
  std::string named = " I used submit_prayer_request.";
  ASSERT_TRUE(names.ReviewSentence(ctx_, "Hello.", named));
  EXPECT_EQ(named, " I used prayer request.");

  UiAllowlist ui(Json::object());
  ctx_.input.page_context = {{"ui_elements", {"Map"}}};
  std::string away = " Open the Latency Heatmap panel.";
  ASSERT_TRUE(ui.ReviewSentence(ctx_, "Here is why.", away));
  EXPECT_TRUE(away.empty()) << "never sent";
  std::string on_screen = " The Map shows it.";
  EXPECT_FALSE(ui.ReviewSentence(ctx_, "Here is why.", on_screen));
  std::string tail;
  ASSERT_TRUE(ui.CloseReply(ctx_, "Here is why. The Map shows it.", tail));
  EXPECT_EQ(tail, " I can't point you to the Latency Heatmap panel: it is not on your screen.");

  HonestClaims claims(config_, Json::object());
  std::string correction;
  ASSERT_TRUE(claims.CloseReply(ctx_, "I've booked your appointment.", correction));
  EXPECT_NE(correction.find("appointment booking"), std::string::npos) << correction;
  Outcome("book_appointment", ToolOutcome::Status::kExecuted, true);
  std::string none;
  EXPECT_FALSE(claims.CloseReply(ctx_, "I've booked your appointment.", none)) << "the call ran after the sentence";
}

TEST(UiAllowlistTest, FlagsNamedElementsThatAreNotOnScreen) {
  Json page = {{"ui_elements", {"Nodes tab", "Map", "Alerts"}}};
  EXPECT_EQ(UnknownUiElements(Json::object(), "Open the Latency Heatmap panel to see why.", page),
            std::vector<std::string>{"Latency Heatmap panel"});
  EXPECT_TRUE(UnknownUiElements(Json::object(), "The Nodes tab lists them.", page).empty());
  EXPECT_TRUE(UnknownUiElements(Json::object(), "No UI mentioned here.", page).empty());
  Json custom = {{"element_patterns", {"(?i)the (\\w+) drawer"}}};
  EXPECT_EQ(UnknownUiElements(custom, "Check the settings drawer.", page), std::vector<std::string>{"settings"});
}

}  // namespace
}  // namespace reins
