#include "eval/checks.h"

#include <gtest/gtest.h>

namespace reins {
namespace {

Check MakeCheck(const std::string& kind, Json value) {
  Check c;
  c.kind = kind;
  c.value = std::move(value);
  return c;
}

TurnRun Turn(const std::string& reply, TurnStatus status = TurnStatus::kCompleted) {
  TurnRun t;
  t.number = 1;
  t.result.reply = reply;
  t.result.status = status;
  return t;
}

TEST(ChecksTest, FirstSentenceStopsAtTerminalPunctuationOrNewline) {
  EXPECT_EQ(FirstSentence("I'm so sorry. Your request is saved."), "I'm so sorry.");
  EXPECT_EQ(FirstSentence("Version 2.5 is out! Yes."), "Version 2.5 is out!");
  EXPECT_EQ(FirstSentence("Line one\nLine two"), "Line one");
  EXPECT_EQ(FirstSentence("no end"), "no end");
}

TEST(ChecksTest, ReplyChecksAreCaseInsensitiveAndReportWhatWasSeen) {
  TurnRun t = Turn("Sent to John Doe.");
  EXPECT_TRUE(EvaluateTurnCheck(MakeCheck("reply_contains", "john doe"), t).passed);
  CheckResult miss = EvaluateTurnCheck(MakeCheck("reply_contains", Json::array({"John", "Smith"})), t);
  EXPECT_FALSE(miss.passed);
  EXPECT_NE(miss.detail.find("Smith"), std::string::npos);
  EXPECT_FALSE(EvaluateTurnCheck(MakeCheck("reply_not_contains", "doe"), t).passed);
  EXPECT_TRUE(EvaluateTurnCheck(MakeCheck("first_sentence_not_matches", "(?i)submitted"), t).passed);
}

TEST(ChecksTest, ToolChecksMatchNamesAndArgumentSubsets) {
  TurnRun t = Turn("ok");
  ToolOutcome sent;
  sent.name = "send";
  sent.args = {{"to", "u_doe"}, {"content", "hi"}};
  ToolOutcome refused = sent;
  refused.status = ToolOutcome::Status::kRejected;
  refused.args = {{"to", "u_smith"}};
  t.result.tools = {sent, refused};
  EXPECT_TRUE(EvaluateTurnCheck(MakeCheck("tools_executed", Json::parse(R"([{"name": "send", "args": {"to": "u_doe"}}])")), t).passed);
  EXPECT_FALSE(EvaluateTurnCheck(MakeCheck("tools_executed", Json::parse(R"([{"name": "send", "args": {"to": "u_smith"}}])")), t).passed);
  EXPECT_TRUE(EvaluateTurnCheck(MakeCheck("tools_rejected", Json::parse(R"([{"name": "send", "args": {"to": "u_smith"}}])")), t).passed);
  EXPECT_FALSE(EvaluateTurnCheck(MakeCheck("tools_not_executed", Json::array({"send"})), t).passed);
}

TEST(ChecksTest, ModelCallsExactOrMax) {
  TurnRun t = Turn("ok");
  t.result.model_calls = 3;
  EXPECT_TRUE(EvaluateTurnCheck(MakeCheck("model_calls", 3), t).passed);
  EXPECT_FALSE(EvaluateTurnCheck(MakeCheck("model_calls", 2), t).passed);
  EXPECT_TRUE(EvaluateTurnCheck(MakeCheck("model_calls", Json{{"max", 3}}), t).passed);
  EXPECT_FALSE(EvaluateTurnCheck(MakeCheck("model_calls", Json{{"max", 2}}), t).passed);
}

TEST(ChecksTest, FinalInvocationsCountAcrossTurns) {
  TurnRun a = Turn("a"), b = Turn("b");
  ToolOutcome o;
  o.name = "send";
  a.result.tools = {o};
  b.result.tools = {o};
  EXPECT_TRUE(EvaluateFinalCheck(MakeCheck("invocations", Json{{"send", 2}}), {a, b}).passed);
  EXPECT_FALSE(EvaluateFinalCheck(MakeCheck("invocations", Json{{"send", 1}}), {a, b}).passed);
}

}  // namespace
}  // namespace reins
