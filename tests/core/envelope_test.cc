#include "reins/envelope.h"

#include <gtest/gtest.h>

#include "domain/json_text.h"

namespace reins {
namespace {

// The text the store keeps and the model reads is the DOM's, written directly.
TEST(EnvelopeTest, ItsTextIsItsJsonsWhateverItHolds) {
  std::vector<ResultEnvelope> cases(6);
  cases[1] = ResultEnvelope::Failure("the \"db\" is down\n");
  cases[2].data = Json::parse(R"({"z": [1, 2.5, null], "a": {"caf\u00e9": true}, "q": "say \"hi\""})");
  cases[2].instruction_for_ai = "Ask which one.";
  cases[3].next_action = NextAction::kClarificationNeeded;
  cases[3].clarification = Clarification{"person", "Which John?", {{"p_1", "John Smith", "", std::nullopt, Json()},
                                                                    {"p_2", "John Doe", "Leeds", 0.5, {{"k", 1}}}}};
  cases[4].lease = LeaseRequest{"booking", 120};
  cases[5].data = Json::array({"x"});
  cases[5].success = false;
  cases[5].next_action = NextAction::kComplete;
  for (const ResultEnvelope& e : cases) EXPECT_EQ(EnvelopeText(e), JsonText(EnvelopeToJson(e)));
}

TEST(EnvelopeTest, PlainJsonBecomesDataWithContinue) {
  ResultEnvelope e = NormaliseToolResult(Json{{"temp", 12}});
  EXPECT_TRUE(e.success);
  EXPECT_EQ(e.next_action, NextAction::kContinue);
  EXPECT_EQ(e.data, (Json{{"temp", 12}}));
}

TEST(EnvelopeTest, BareDataFormIsAnEnvelope) {
  ResultEnvelope e = NormaliseToolResult(Json::parse(R"({"data": {"contacts": []}})"));
  EXPECT_TRUE(e.success);
  EXPECT_EQ(e.data, Json::parse(R"({"contacts": []})"));
}

TEST(EnvelopeTest, NonObjectBecomesData) {
  ResultEnvelope e = NormaliseToolResult(Json::array({1, 2}));
  EXPECT_TRUE(e.success);
  EXPECT_EQ(e.data, Json::array({1, 2}));
}

TEST(EnvelopeTest, SuccessFalseImpliesError) {
  ResultEnvelope e = NormaliseToolResult(Json{{"success", false}, {"error", "db down"}});
  EXPECT_FALSE(e.success);
  EXPECT_EQ(e.next_action, NextAction::kError);
  EXPECT_EQ(e.error, "db down");
  EXPECT_TRUE(e.StopsChain());
}

TEST(EnvelopeTest, ErrorActionImpliesFailure) {
  ResultEnvelope e = NormaliseToolResult(Json{{"success", true}, {"next_action", "error"}});
  EXPECT_FALSE(e.success);
  EXPECT_FALSE(e.error.empty());
}

TEST(EnvelopeTest, ClarificationIsParsedWithRealIds) {
  ResultEnvelope e = NormaliseToolResult(Json::parse(R"({
    "success": true, "next_action": "clarification_needed",
    "clarification": {"type": "contact_selection", "question": "Which John?",
      "options": [{"id": "u_doe", "title": "John Doe", "confidence": 0.85},
                  {"id": "u_smith", "title": "John Smith"}]}})"));
  ASSERT_TRUE(e.success) << e.error;
  ASSERT_TRUE(e.clarification);
  ASSERT_EQ(e.clarification->options.size(), 2u);
  EXPECT_EQ(e.clarification->options[0].id, "u_doe");
  EXPECT_DOUBLE_EQ(*e.clarification->options[0].confidence, 0.85);
  EXPECT_FALSE(e.clarification->options[1].confidence);
}

TEST(EnvelopeTest, UnknownNextActionIsMalformed) {
  ResultEnvelope e = NormaliseToolResult(Json{{"success", true}, {"next_action", "maybe"}});
  EXPECT_FALSE(e.success);
  EXPECT_NE(e.error.find("malformed tool result: unknown next_action"), std::string::npos) << e.error;
}

TEST(EnvelopeTest, ClarificationWithoutOptionsIsMalformed) {
  ResultEnvelope e = NormaliseToolResult(Json::parse(
      R"({"next_action": "clarification_needed", "clarification": {"question": "Which?"}})"));
  EXPECT_FALSE(e.success);
  EXPECT_NE(e.error.find("options"), std::string::npos) << e.error;
}

TEST(EnvelopeTest, OptionWithoutIdIsMalformed) {
  ResultEnvelope e = NormaliseToolResult(Json::parse(R"({"next_action": "clarification_needed",
      "clarification": {"question": "Which?", "options": [{"title": "John"}]}})"));
  EXPECT_FALSE(e.success);
  EXPECT_NE(e.error.find("has no id"), std::string::npos) << e.error;
}

TEST(EnvelopeTest, MissingClarificationIsMalformed) {
  ResultEnvelope e = NormaliseToolResult(Json{{"next_action", "clarification_needed"}});
  EXPECT_FALSE(e.success);
  EXPECT_NE(e.error.find("no clarification"), std::string::npos);
}

TEST(EnvelopeTest, NonBooleanSuccessIsMalformed) {
  ResultEnvelope e = NormaliseToolResult(Json{{"success", "yes"}});
  EXPECT_FALSE(e.success);
  EXPECT_NE(e.error.find("malformed"), std::string::npos);
}

TEST(EnvelopeTest, RoundTripsThroughJson) {
  ResultEnvelope e = NormaliseToolResult(Json::parse(R"({"success": true, "next_action": "complete",
      "data": {"message_id": "m1"}, "instruction_for_ai": "Say it was sent.",
      "lease": {"domain": "music", "ttl_s": 20}})"));
  Json j = EnvelopeToJson(e);
  ResultEnvelope again = NormaliseToolResult(j);
  EXPECT_EQ(EnvelopeToJson(again), j);
  ASSERT_TRUE(again.lease);
  EXPECT_EQ(again.lease->ttl_s, 20);
}

}  // namespace
}  // namespace reins
